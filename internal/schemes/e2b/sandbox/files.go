package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/executor"
)

// envd's filesystem API (issue 27): GET /files downloads a file, POST /files uploads one as
// multipart form data (what the SDKs send by default, and what every envd version takes), and
// the Connect unary filesystem.Filesystem/ListDir and Stat list and describe (JSON codec).

// Bounds on what envd's filesystem answers may make the client hold.
const (
	// maxListDirBody bounds a ListDir answer (a directory of ~50k entries); the entries past
	// executor.MaxListEntries are counted as they are decoded, not held.
	maxListDirBody = 16 << 20
)

// homeDir is the sandbox user's home: envd resolves relative paths against it, and run_code
// and run_command run there.
const homeDir = "/home/user"

// filesQuery is the /files query for p: envd before 0.4.0 needs the user named, as the SDKs do.
func filesQuery(sb *Sandbox, p string) string {
	q := url.Values{"path": {p}}
	if versionBefore(sb.EnvdVersion, 0, 4) {
		q.Set("username", "user")
	}
	return "/files?" + q.Encode()
}

// versionBefore says whether version v ("0.5.7") is before major.minor; unparsable is not.
func versionBefore(v string, major, minor int) bool {
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return ma < major || (ma == major && mi < minor)
}

func (c *Client) envdRequest(ctx context.Context, sb *Sandbox, method, path, contentType string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base(sb, envdPort)+path, body)
	if err != nil {
		return nil, fmt.Errorf("E2B_SANDBOX_URL / sandbox address is not a usable URL: %w", err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("E2b-Sandbox-Id", sb.ID)
	req.Header.Set("E2b-Sandbox-Port", strconv.Itoa(envdPort))
	req.Header.Set("User-Agent", "mcpsandbox")
	if sb.token != "" {
		req.Header.Set("X-Access-Token", sb.token)
	}
	return req, nil
}

// doEnvd sends req; a transport failure becomes an error that names what failed.
func (c *Client) doEnvd(ctx context.Context, what string, req *http.Request) (*http.Response, error) {
	resp, err := c.hc.Do(req)
	if err == nil {
		return resp, nil
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil, fmt.Errorf("%s: the sandbox did not answer within the call's limits.timeout", what)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return nil, fmt.Errorf("%s: cannot reach the sandbox's envd (%s)", what, c.clean(err.Error()))
}

// filesStatus turns a failed envd answer into an error: envd's JSON {"code","message"} (the
// HTTP file API) or {"code":"not_found","message"} (Connect) gives the message.
func (c *Client) filesStatus(what, p string, resp *http.Response) error {
	switch {
	case resp.StatusCode/100 == 3, resp.StatusCode == http.StatusBadGateway, resp.StatusCode == http.StatusUnauthorized:
		return c.sandboxStatus(what, resp)
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrBody))
	var e struct {
		Message string `json:"message"`
	}
	msg := string(b)
	if json.Unmarshal(b, &e) == nil && e.Message != "" {
		msg = e.Message
	}
	msg = c.clean(msg)
	if resp.StatusCode == http.StatusNotFound {
		return fmt.Errorf("%s: %q does not exist in the sandbox (%s)", what, p, msg)
	}
	return fmt.Errorf("%s: envd answered %d: %s", what, resp.StatusCode, msg)
}

// WriteFile uploads data to p (relative to /home/user), creating the parents, and returns the
// path envd wrote.
func (c *Client) WriteFile(ctx context.Context, sb *Sandbox, p string, data []byte) (string, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", p)
	if err != nil {
		return "", err
	}
	fw.Write(data)
	mw.Close()
	req, err := c.envdRequest(ctx, sb, http.MethodPost, filesQuery(sb, p), mw.FormDataContentType(), &body)
	if err != nil {
		return "", err
	}
	resp, err := c.doEnvd(ctx, "write the file", req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", c.filesStatus("write the file", p, resp)
	}
	var out []struct {
		Path string `json:"path"`
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAPIBody+1))
	if err != nil {
		return "", fmt.Errorf("write the file: reading envd's answer: %w", err)
	}
	if len(b) > maxAPIBody || json.Unmarshal(b, &out) != nil || len(out) == 0 || out[0].Path == "" {
		return "", fmt.Errorf("write the file: envd's answer is not the written file's entry (%d bytes): refusing a malformed answer", len(b))
	}
	return c.clean(out[0].Path), nil
}

// ReadFile downloads at most max bytes of the file at p and its whole size. It never reads more
// than max+1 bytes of the answer, whatever its Content-Length says: the extra byte tells a file
// longer than max, whose size then comes from the Content-Length or from Stat.
func (c *Client) ReadFile(ctx context.Context, sb *Sandbox, p string, max int64) ([]byte, int64, error) {
	req, err := c.envdRequest(ctx, sb, http.MethodGet, filesQuery(sb, p), "", nil)
	if err != nil {
		return nil, 0, err
	}
	// No transparent gzip: the Content-Length is then the file's, and a compressed answer
	// (which was not asked for) is refused below rather than inflated.
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := c.doEnvd(ctx, "read the file", req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, 0, c.filesStatus("read the file", p, resp)
	}
	if ce := resp.Header.Get("Content-Encoding"); ce != "" && ce != "identity" {
		return nil, 0, fmt.Errorf("read the file: envd answered with Content-Encoding %q, which was not asked for: refusing it", c.clean(ce))
	}
	var body io.Reader = io.LimitReader(resp.Body, max+1)
	if mutated("e2b-read-bound") {
		body = resp.Body
	}
	var buf bytes.Buffer
	if cl := resp.ContentLength; cl > 0 {
		buf.Grow(int(min(cl, max+1, 1<<20))) // a hint only: never sized by what envd claims
	}
	if _, err := buf.ReadFrom(body); err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, 0, errors.New("read the file: the download did not finish within the call's limits.timeout")
		}
		if ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
		return nil, 0, fmt.Errorf("read the file: the download broke off (%s): the answer is shorter than its Content-Length, or the sandbox was killed", c.clean(err.Error()))
	}
	data := buf.Bytes()
	if int64(len(data)) <= max {
		return data, int64(len(data)), nil
	}
	data = data[:max]
	if cl := resp.ContentLength; cl > max {
		return data, cl, nil
	}
	size, err := c.statSize(ctx, sb, p)
	if err != nil {
		return nil, 0, err
	}
	if size <= max {
		return nil, 0, fmt.Errorf("read the file: envd sent more than the file's %d bytes: refusing a malformed answer", size)
	}
	return data, size, nil
}

// entryJSON is filesystem.EntryInfo as proto3 JSON: enums by name (or number), int64 as a
// string (or number).
type entryJSON struct {
	Name string          `json:"name"`
	Path string          `json:"path"`
	Type json.RawMessage `json:"type"`
	Size json.RawMessage `json:"size"`
}

func (e *entryJSON) kind() string {
	switch strings.Trim(string(e.Type), `"`) {
	case "FILE_TYPE_FILE", "1":
		return "file"
	case "FILE_TYPE_DIRECTORY", "2":
		return "dir"
	case "FILE_TYPE_SYMLINK", "3":
		return "link"
	}
	return "other"
}

func (e *entryJSON) size() int64 {
	n, _ := strconv.ParseInt(strings.Trim(string(e.Size), `"`), 10, 64)
	return max(n, 0)
}

// connectUnary calls filesystem.Filesystem/<method> with a JSON request; the caller reads the
// answer's body, which is a success.
func (c *Client) connectUnary(ctx context.Context, sb *Sandbox, method, what, p string, in any) (*http.Response, error) {
	payload, _ := json.Marshal(in)
	req, err := c.envdRequest(ctx, sb, http.MethodPost, "/filesystem.Filesystem/"+method, "application/json", bytes.NewReader(payload))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Connect-Protocol-Version", "1")
	if dl, ok := ctx.Deadline(); ok {
		req.Header.Set("Connect-Timeout-Ms", strconv.FormatInt(max(time.Until(dl).Milliseconds(), 1), 10))
	}
	resp, err := c.doEnvd(ctx, what, req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		return nil, c.filesStatus(what, p, resp)
	}
	return resp, nil
}

// statSize is the size of the file at p (Stat).
func (c *Client) statSize(ctx context.Context, sb *Sandbox, p string) (int64, error) {
	resp, err := c.connectUnary(ctx, sb, "Stat", "read the file's size", p, map[string]any{"path": p})
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var out struct {
		Entry *entryJSON `json:"entry"`
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAPIBody+1))
	if err != nil || len(b) > maxAPIBody || json.Unmarshal(b, &out) != nil || out.Entry == nil {
		return 0, errors.New("read the file's size: envd's Stat answer is not an entry: refusing a malformed answer")
	}
	return out.Entry.size(), nil
}

// ListDir lists the directory at p: at most executor.MaxListEntries entries, and how many more
// there are. The answer is decoded as it arrives, within maxListDirBody.
func (c *Client) ListDir(ctx context.Context, sb *Sandbox, p string) ([]executor.FileEntry, int, error) {
	resp, err := c.connectUnary(ctx, sb, "ListDir", "list the directory", p, map[string]any{"path": p, "depth": 1})
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	lr := &io.LimitedReader{R: resp.Body, N: maxListDirBody + 1}
	entries, more, err := decodeEntries(json.NewDecoder(lr))
	if err != nil {
		if lr.N <= 0 {
			return nil, 0, fmt.Errorf("list the directory: envd's answer passed %d bytes: refusing it", maxListDirBody)
		}
		if ctx.Err() != nil {
			return nil, 0, errors.New("list the directory: the answer did not finish within the call's limits.timeout")
		}
		return nil, 0, fmt.Errorf("list the directory: envd's answer is not a ListDirResponse (%s): refusing a malformed answer", c.clean(err.Error()))
	}
	for i := range entries {
		entries[i].Name = c.clean(entries[i].Name)
	}
	return entries, more, nil
}

// decodeEntries reads {"entries":[...]} keeping the first MaxListEntries and counting the rest.
func decodeEntries(dec *json.Decoder) ([]executor.FileEntry, int, error) {
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, 0, fmt.Errorf("not a JSON object (%v)", err)
	}
	var out []executor.FileEntry
	more := 0
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, 0, err
		}
		if k != "entries" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, 0, err
			}
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('[') {
			return nil, 0, fmt.Errorf("entries is not a list (%v)", err)
		}
		for dec.More() {
			var e entryJSON
			if err := dec.Decode(&e); err != nil {
				return nil, 0, err
			}
			if len(out) >= executor.MaxListEntries {
				more++
				continue
			}
			out = append(out, executor.FileEntry{Name: e.Name, Type: e.kind(), Size: e.size()})
		}
		if _, err := dec.Token(); err != nil {
			return nil, 0, err
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, 0, err
	}
	return out, more, nil
}
