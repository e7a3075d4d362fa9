package e2bfake

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// envd's filesystem API as the SDKs use it: GET/POST /files (download, and upload as multipart
// form data or application/octet-stream) and the Connect unary filesystem.Filesystem/ListDir
// and Stat (JSON codec). Paths resolve as in a sandbox whose user is "user": relative paths
// and /home/user/... are the sandbox's directory (what its programs see as $HOME and cwd);
// other absolute paths live under a ".root" directory in it, so they exist for the file API
// but not where a program would look. Every access goes through an os.Root: a symlink a
// program plants cannot take the file API out of the sandbox's directory.
const (
	// homeDir is the sandbox user's home, the base of relative paths.
	homeDir = "/home/user"
	// maxUpload bounds one upload request's body; maxListEntries one ListDir answer.
	maxUpload      = 64 << 20
	maxListEntries = 10000
	maxListDepth   = 16
)

// sandboxPath cleans p (relative to /home/user) into the sandbox's absolute path and the path
// inside sb.dir that holds it.
func sandboxPath(p string) (abs, rel string) {
	if !strings.HasPrefix(p, "/") {
		p = homeDir + "/" + p
	}
	abs = path.Clean(p)
	switch {
	case abs == homeDir:
		return abs, "."
	case strings.HasPrefix(abs, homeDir+"/"):
		return abs, strings.TrimPrefix(abs, homeDir+"/")
	case abs == "/":
		return abs, ".root"
	}
	return abs, ".root" + abs
}

// fileError answers the HTTP file API's way: JSON {"code","message"} with the status.
func fileError(w http.ResponseWriter, status int, format string, a ...any) {
	writeJSON(w, status, map[string]any{"code": status, "message": fmt.Sprintf(format, a...)})
}

// statusOf maps a filesystem error to envd's status.
func statusOf(err error) int {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return http.StatusNotFound
	case errors.Is(err, fs.ErrPermission):
		return http.StatusUnauthorized
	}
	return http.StatusBadRequest
}

func (s *Server) files(w http.ResponseWriter, r *http.Request, sb *sandbox) {
	root, err := os.OpenRoot(sb.dir)
	if err != nil {
		fileError(w, http.StatusBadGateway, "the sandbox is not running")
		return
	}
	defer root.Close()
	switch r.Method {
	case http.MethodGet:
		s.count("download")
		s.download(w, r, root)
	case http.MethodPost:
		s.count("upload")
		s.upload(w, r, root)
	default:
		fileError(w, http.StatusMethodNotAllowed, "method %s not allowed on /files", r.Method)
	}
}

func (s *Server) download(w http.ResponseWriter, r *http.Request, root *os.Root) {
	p := r.URL.Query().Get("path")
	if p == "" {
		fileError(w, http.StatusBadRequest, "path is required")
		return
	}
	abs, rel := sandboxPath(p)
	f, err := root.Open(rel)
	if err != nil {
		fileError(w, statusOf(err), "path '%s' does not exist", abs)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.IsDir() {
		fileError(w, http.StatusBadRequest, "path '%s' is a directory", abs)
		return
	}
	if !fi.Mode().IsRegular() {
		fileError(w, http.StatusBadRequest, "path '%s' is not a regular file", abs)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("inline", map[string]string{"filename": path.Base(abs)}))
	w.Header().Set("Content-Length", strconv.FormatInt(fi.Size(), 10))
	w.WriteHeader(http.StatusOK)
	io.CopyN(w, f, fi.Size())
}

// upload writes the request's file(s): multipart parts named "file" (at the path parameter,
// or at each part's file name when there is none), or an application/octet-stream body at the
// path parameter. It answers the written entries.
func (s *Server) upload(w http.ResponseWriter, r *http.Request, root *os.Root) {
	r.Body = http.MaxBytesReader(w, r.Body, maxUpload)
	q := r.URL.Query().Get("path")
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var written []map[string]any
	put := func(p string, body io.Reader) bool {
		if p == "" {
			fileError(w, http.StatusBadRequest, "path is required")
			return false
		}
		abs, rel := sandboxPath(p)
		if err := writeIn(root, rel, body, s.opts.UID, s.opts.GID); err != nil {
			fileError(w, statusOf(err), "error writing file '%s': %v", abs, err)
			return false
		}
		written = append(written, map[string]any{"path": abs, "name": path.Base(abs), "type": "file"})
		return true
	}
	switch mt {
	case "application/octet-stream":
		if !put(q, r.Body) {
			return
		}
	case "multipart/form-data":
		mr := multipart.NewReader(r.Body, params["boundary"])
		for {
			part, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				fileError(w, http.StatusBadRequest, "error parsing multipart form: %v", err)
				return
			}
			if part.FormName() != "file" {
				continue
			}
			p := q
			if p == "" {
				p = part.FileName()
			}
			if !put(p, part) {
				return
			}
		}
	default:
		fileError(w, http.StatusBadRequest, "unsupported Content-Type %q: multipart/form-data or application/octet-stream", mt)
		return
	}
	if len(written) == 0 {
		fileError(w, http.StatusBadRequest, "no file in the request")
		return
	}
	writeJSON(w, http.StatusOK, written)
}

// writeIn writes body at rel inside root, creating the parents, owned by the sandbox user.
func writeIn(root *os.Root, rel string, body io.Reader, uid, gid int) error {
	if rel == "." || rel == ".root" {
		return errors.New("is a directory")
	}
	dir := filepath.Dir(rel)
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && os.Geteuid() == 0 {
		// The fake runs programs as an unprivileged user: what the file API writes is theirs.
		for d := dir; d != "." && err == nil; d = filepath.Dir(d) {
			err = root.Chown(d, uid, gid)
		}
		if err == nil {
			err = root.Chown(rel, uid, gid)
		}
	}
	return err
}

// entryInfo is filesystem.EntryInfo in proto3 JSON (int64 as a string, enums by name,
// timestamps in RFC 3339, zero values omitted).
func entryInfo(abs string, fi fs.FileInfo, target string) map[string]any {
	e := map[string]any{"name": path.Base(abs), "path": abs, "mode": uint32(fi.Mode().Perm()),
		"permissions": fi.Mode().String(), "owner": "user", "group": "user",
		"modifiedTime": fi.ModTime().UTC().Format(time.RFC3339Nano)}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		e["type"] = "FILE_TYPE_SYMLINK"
		e["symlinkTarget"] = target
	case fi.IsDir():
		e["type"] = "FILE_TYPE_DIRECTORY"
	case fi.Mode().IsRegular():
		e["type"] = "FILE_TYPE_FILE"
	}
	if fi.Size() != 0 {
		e["size"] = strconv.FormatInt(fi.Size(), 10)
	}
	return e
}

// filesystemRPC serves filesystem.Filesystem's unary methods the SDKs call (Connect, JSON).
func (s *Server) filesystemRPC(w http.ResponseWriter, r *http.Request, sb *sandbox, method string) {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		connectError(w, http.StatusUnsupportedMediaType, "unknown", "the fake speaks Connect with the JSON codec only; got Content-Type "+ct)
		return
	}
	var req struct {
		Path  string `json:"path"`
		Depth uint32 `json:"depth"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, maxRequestFrame)).Decode(&req); err != nil {
		connectError(w, http.StatusBadRequest, "invalid_argument", "bad request: "+err.Error())
		return
	}
	root, err := os.OpenRoot(sb.dir)
	if err != nil {
		connectError(w, http.StatusServiceUnavailable, "unavailable", "the sandbox is not running")
		return
	}
	defer root.Close()
	abs, rel := sandboxPath(req.Path)
	fi, err := root.Lstat(rel)
	if err != nil {
		connectError(w, http.StatusNotFound, "not_found", fmt.Sprintf("path '%s' does not exist", abs))
		return
	}
	switch method {
	case "Stat":
		s.count("stat")
		target, _ := root.Readlink(rel)
		writeJSON(w, http.StatusOK, map[string]any{"entry": entryInfo(abs, fi, target)})
	case "ListDir":
		s.count("listdir")
		if !fi.IsDir() {
			connectError(w, http.StatusBadRequest, "invalid_argument", fmt.Sprintf("path '%s' is not a directory", abs))
			return
		}
		depth := int(max(req.Depth, 1))
		entries := []map[string]any{}
		listDir(root, abs, rel, min(depth, maxListDepth), &entries)
		writeJSON(w, http.StatusOK, map[string]any{"entries": entries})
	default:
		connectError(w, http.StatusNotFound, "unimplemented", "filesystem.Filesystem/"+method+" is not served by the fake")
	}
}

// listDir appends the entries of rel (and of its subdirectories, depth levels down), at most
// maxListEntries in all.
func listDir(root *os.Root, abs, rel string, depth int, out *[]map[string]any) {
	d, err := root.Open(rel)
	if err != nil {
		return
	}
	ents, _ := d.ReadDir(-1)
	d.Close()
	for _, de := range ents {
		if len(*out) >= maxListEntries {
			return
		}
		if rel == "." && de.Name() == ".root" {
			continue // the fake's home for paths outside /home/user
		}
		fi, err := de.Info()
		if err != nil {
			continue
		}
		childAbs, childRel := path.Join(abs, de.Name()), path.Join(rel, de.Name())
		target, _ := root.Readlink(childRel)
		*out = append(*out, entryInfo(childAbs, fi, target))
		if fi.IsDir() && depth > 1 {
			listDir(root, childAbs, childRel, depth-1, out)
		}
	}
}
