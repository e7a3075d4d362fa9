package executor

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/url"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The file tools every scheme may offer (issue 27): one implementation of their arguments,
// caps, encodings, hashes and results (FileTools), around what each scheme knows of where a
// file may be (its FileSystem).
const (
	ToolWriteFile = "write_file"
	ToolReadFile  = "read_file"
	ToolListFiles = "list_files"
)

// Fixed bounds of the file tools and of pictures (limits.max_file_bytes bounds one file).
const (
	// MaxListEntries bounds the entries list_files returns (the rest are counted).
	MaxListEntries = 1000
	// MaxPathBytes bounds a path argument.
	MaxPathBytes = 4096
	// MaxImages bounds the pictures one call returns, MaxImageBytes each one's size and
	// MaxImagesBytes all of them together: past them a picture is listed, not sent.
	MaxImages      = 8
	MaxImageBytes  = 4 << 20
	MaxImagesBytes = 8 << 20
)

// WriteFileArgs are write_file's arguments: exactly one of Content and ContentBase64.
type WriteFileArgs struct {
	Path          string  `json:"path" jsonschema:"where to write the file (relative paths are relative to the sandbox's working directory)"`
	Content       *string `json:"content,omitempty" jsonschema:"the file's content as text (UTF-8)"`
	ContentBase64 *string `json:"content_base64,omitempty" jsonschema:"the file's content, base64-encoded (for binary files)"`
}

// ReadFileArgs are read_file's arguments.
type ReadFileArgs struct {
	Path     string `json:"path" jsonschema:"the file to read"`
	MaxBytes int64  `json:"max_bytes,omitempty" jsonschema:"read at most this many bytes (default and ceiling: limits.max_file_bytes)"`
}

// ListFilesArgs are list_files's arguments.
type ListFilesArgs struct {
	Path string `json:"path,omitempty" jsonschema:"the directory to list (default: the working directory)"`
}

// FileResult is what a file tool did to one file.
type FileResult struct {
	Path   string `json:"path" jsonschema:"the file's path as the sandbox names it"`
	Size   int64  `json:"size" jsonschema:"the file's size in bytes"`
	SHA256 string `json:"sha256" jsonschema:"sha256 of the bytes written or read (hex)"`
	// Content or ContentBase64 hold what read_file read: text when it is valid UTF-8 without
	// NUL bytes and few control bytes (textLike), base64 otherwise.
	Content       string `json:"content,omitempty" jsonschema:"the bytes read, when they are UTF-8 text"`
	ContentBase64 string `json:"content_base64,omitempty" jsonschema:"the bytes read, base64-encoded, when they are not UTF-8 text"`
	Truncated     bool   `json:"truncated,omitempty" jsonschema:"the file is longer than max_bytes: only its first max_bytes were read"`
}

// FileEntry is one entry list_files found.
type FileEntry struct {
	Name string `json:"name" jsonschema:"the entry's name in the directory"`
	Type string `json:"type" jsonschema:"file, dir, link or other"`
	Size int64  `json:"size" jsonschema:"size in bytes (files)"`
}

// Image is a picture a call's program made, sent to the client as MCP image content.
type Image struct {
	Name     string `json:"name" jsonschema:"the picture's file name (or display name)"`
	MIMEType string `json:"mime_type" jsonschema:"image/png, image/jpeg, image/gif, image/webp or image/svg+xml"`
	Size     int64  `json:"size" jsonschema:"its size in bytes"`
	SHA256   string `json:"sha256" jsonschema:"sha256 of its bytes (hex)"`
	// Omitted says why the picture was not sent (past a bound); Data is then nil.
	Omitted string `json:"omitted,omitempty" jsonschema:"why the picture was not sent (its bound)"`
	Data    []byte `json:"-"`
}

// NewImage describes a picture's bytes; ImageMIME names its type.
func NewImage(name string, data []byte) Image {
	sum := sha256.Sum256(data)
	return Image{Name: name, MIMEType: ImageMIME(name, data), Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:]), Data: data}
}

// ImageMIME is a picture's type, from its first bytes (SVG: from its name), "" if not a picture.
func ImageMIME(name string, data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(data, []byte("\xff\xd8\xff")):
		return "image/jpeg"
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		return "image/gif"
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return "image/webp"
	case strings.EqualFold(path.Ext(name), ".svg") && bytes.Contains(data[:min(len(data), 4096)], []byte("<svg")):
		return MIMESVG
	}
	return ""
}

// BoundImages applies MaxImages, MaxImageBytes and MaxImagesBytes to the pictures of one call,
// in order: the ones past a bound keep their description and say why they were not sent.
func BoundImages(imgs []Image) []Image {
	total := int64(0)
	for i := range imgs {
		switch {
		case i >= MaxImages:
			imgs[i].Omitted = fmt.Sprintf("not sent: a call returns at most %d pictures", MaxImages)
		case imgs[i].Size > MaxImageBytes:
			imgs[i].Omitted = fmt.Sprintf("not sent: %d bytes, over the %d-byte bound of one picture (read it with read_file)", imgs[i].Size, MaxImageBytes)
		case total+imgs[i].Size > MaxImagesBytes:
			imgs[i].Omitted = fmt.Sprintf("not sent: the call's pictures would pass %d bytes together (read it with read_file)", MaxImagesBytes)
		default:
			total += imgs[i].Size
			continue
		}
		imgs[i].Data = nil
	}
	return imgs
}

// MIMESVG is an SVG picture's type. An SVG is text (XML), not image content: clients send image
// content to a model that takes PNG, JPEG, GIF and WebP only (Claude Code's API call fails on an
// image/svg+xml one), so it goes as an embedded text resource, its markup for the model to read.
const MIMESVG = "image/svg+xml"

// ImageContents are a result's pictures as MCP content, for serve: image content, or an SVG as
// an embedded resource (sandbox:///NAME, its text).
func ImageContents(res *Result) []mcp.Content {
	var out []mcp.Content
	for _, im := range res.Images {
		switch {
		case im.Data == nil || im.Omitted != "":
		case im.MIMEType == MIMESVG && !mutated("svg-as-image"):
			rc := &mcp.ResourceContents{URI: (&url.URL{Scheme: "sandbox", Path: "/" + strings.TrimLeft(im.Name, "/")}).String(), MIMEType: im.MIMEType}
			if utf8.Valid(im.Data) {
				rc.Text = string(im.Data)
			} else {
				rc.Blob = im.Data
			}
			out = append(out, &mcp.EmbeddedResource{Resource: rc})
		default:
			out = append(out, &mcp.ImageContent{Data: im.Data, MIMEType: im.MIMEType})
		}
	}
	return out
}

// FileSystem is what a scheme knows of its files; FileTools does the rest. Paths are the
// client's, unchecked: each method judges its path by the scheme's rules and refuses (a
// *Refusal naming the rule) what they forbid.
type FileSystem interface {
	// WriteFile writes data at p, creating missing directories. The result's File is filled by
	// FileTools; a scheme may set Workspace (what its commit did).
	WriteFile(ctx context.Context, c Call, p string, data []byte) (*Result, error)
	// ReadFile reads at most max bytes of the file at p and says its whole size.
	ReadFile(ctx context.Context, c Call, p string, max int64) (data []byte, size int64, err error)
	// ListFiles lists the directory at p ("" = the working directory), at most MaxListEntries
	// entries, and how many more there are.
	ListFiles(ctx context.Context, c Call, p string) (entries []FileEntry, more int, err error)
}

// FileTools are the three file tools over fs. where says, for all three descriptions, what the
// paths are relative to; writes says, for write_file's only, how a write is checked or where
// writes may go ("" for nothing more). maxBytes is limits.max_file_bytes (0: none). ann is
// write_file's annotations; read_file and list_files get them read-only, and each tool's
// annotation title is its own title.
func FileTools(fs FileSystem, maxBytes int64, where, writes string, ann *mcp.ToolAnnotations) []Tool {
	if maxBytes <= 0 {
		return nil
	}
	const writeTitle, readTitle, listTitle = "Write a file in the sandbox", "Read a file from the sandbox", "List a directory in the sandbox"
	write, read, list := *ann, *ann, *ann
	write.Title, read.Title, list.Title = writeTitle, readTitle, listTitle
	for _, a := range []*mcp.ToolAnnotations{&read, &list} {
		a.ReadOnlyHint, a.DestructiveHint = true, new(bool)
	}
	writeWhere := where
	if writes != "" {
		writeWhere = strings.TrimSpace(where + " " + writes)
	}
	return []Tool{{
		Name:        ToolWriteFile,
		Title:       writeTitle,
		Description: fmt.Sprintf("Write a file (text in content, or binary in content_base64; at most %d bytes) in the sandbox. %s", maxBytes, writeWhere),
		InputSchema: InputSchema[WriteFileArgs](nil),
		Annotations: &write,
		Run:         func(ctx context.Context, c Call) (*Result, error) { return writeFile(ctx, fs, c, maxBytes) },
	}, {
		Name:        ToolReadFile,
		Title:       readTitle,
		Description: fmt.Sprintf("Read a file from the sandbox (at most %d bytes): text comes back in content, anything else in content_base64. %s", maxBytes, where),
		InputSchema: InputSchema[ReadFileArgs](nil),
		Annotations: &read,
		Run:         func(ctx context.Context, c Call) (*Result, error) { return readFile(ctx, fs, c, maxBytes) },
	}, {
		Name:        ToolListFiles,
		Title:       listTitle,
		Description: fmt.Sprintf("List a directory in the sandbox (at most %d entries): name, type and size of each. %s", MaxListEntries, where),
		InputSchema: InputSchema[ListFilesArgs](nil),
		Annotations: &list,
		Run:         func(ctx context.Context, c Call) (*Result, error) { return listFiles(ctx, fs, c) },
	}}
}

// RuleFilePath and RuleFileSize are the rules of the checks FileTools itself makes.
const (
	RuleFilePath = "tool.path"
	RuleFileSize = "limits.max_file_bytes"
)

func checkPath(p string, empty bool) error {
	switch {
	case p == "" && !empty:
		return Refuse(RuleFilePath, "path is empty: name the file")
	case len(p) > MaxPathBytes:
		return Refuse(RuleFilePath, "path is %d bytes, over the %d-byte bound", len(p), MaxPathBytes)
	case strings.ContainsRune(p, 0):
		return Refuse(RuleFilePath, "path holds a NUL byte")
	case !utf8.ValidString(p):
		return Refuse(RuleFilePath, "path is not valid UTF-8")
	}
	return nil
}

func writeFile(ctx context.Context, fs FileSystem, c Call, maxBytes int64) (*Result, error) {
	var a WriteFileArgs
	if err := DecodeArgs(c.Args, &a); err != nil {
		return nil, err
	}
	if err := checkPath(a.Path, false); err != nil {
		return nil, err
	}
	var data []byte
	switch {
	case a.Content != nil && a.ContentBase64 != nil:
		return nil, Refuse("tool.arguments", "give content or content_base64, not both")
	case a.Content != nil:
		data = []byte(*a.Content)
	case a.ContentBase64 != nil:
		if int64(base64.StdEncoding.DecodedLen(len(*a.ContentBase64))) > maxBytes+3 {
			return nil, Refuse(RuleFileSize, "content_base64 holds more than %d bytes (limits.max_file_bytes)", maxBytes)
		}
		d, err := base64.StdEncoding.DecodeString(strings.TrimSpace(*a.ContentBase64))
		if err != nil {
			return nil, Refuse("tool.arguments", "content_base64 is not valid base64: %v", err)
		}
		data = d
	default:
		return nil, Refuse("tool.arguments", "give the file's content in content (text) or content_base64 (binary)")
	}
	if int64(len(data)) > maxBytes {
		return nil, Refuse(RuleFileSize, "the content is %d bytes, over the %d-byte bound (limits.max_file_bytes)", len(data), maxBytes)
	}
	res, err := fs.WriteFile(ctx, c, a.Path, data)
	if err != nil {
		return nil, err
	}
	if res == nil {
		res = &Result{}
	}
	sum := sha256.Sum256(data)
	res.File = &FileResult{Path: a.Path, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
	return res, nil
}

func readFile(ctx context.Context, fs FileSystem, c Call, maxBytes int64) (*Result, error) {
	var a ReadFileArgs
	if err := DecodeArgs(c.Args, &a); err != nil {
		return nil, err
	}
	if err := checkPath(a.Path, false); err != nil {
		return nil, err
	}
	limit := maxBytes
	if a.MaxBytes < 0 {
		return nil, Refuse("tool.arguments", "max_bytes is negative")
	}
	if a.MaxBytes > 0 && a.MaxBytes < limit {
		limit = a.MaxBytes
	}
	data, size, err := fs.ReadFile(ctx, c, a.Path, limit)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		data = data[:limit] // a scheme that read more than asked is cut here
	}
	sum := sha256.Sum256(data)
	f := &FileResult{Path: a.Path, Size: size, SHA256: hex.EncodeToString(sum[:]), Truncated: size > int64(len(data))}
	if textLike(data) {
		f.Content = string(data)
	} else {
		f.ContentBase64 = base64.StdEncoding.EncodeToString(data)
	}
	res := &Result{File: f}
	// a picture read whole is shown as one too, so any scheme's picture file reaches the client;
	// an SVG is text, already in content: not sent twice
	if !f.Truncated {
		if im := NewImage(path.Base(a.Path), data); im.MIMEType != "" && (im.MIMEType != MIMESVG || mutated("svg-as-image")) {
			res.Images = BoundImages([]Image{im})
		}
	}
	return res, nil
}

// textLike: data is valid UTF-8 without NUL bytes, and at most one byte in eight is another
// control byte (tab, newline and carriage return aside) or one of < > & (Go's encoder escapes
// them for HTML). JSON writes such a byte as six (\u0001), in the structured result and its
// text copy alike: a 4 MiB file of them made a 38 MB answer (attack round atk25b, F1), where
// base64 takes 5.6 MB. So a text's JSON is at most 1.7 times its size.
func textLike(data []byte) bool {
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return false
	}
	if mutated("read-file-controls-as-text") {
		return true
	}
	controls := 0
	for _, c := range data {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f || c == '<' || c == '>' || c == '&' {
			controls++
		}
	}
	return controls <= len(data)/8
}

func listFiles(ctx context.Context, fs FileSystem, c Call) (*Result, error) {
	var a ListFilesArgs
	if err := DecodeArgs(c.Args, &a); err != nil {
		return nil, err
	}
	if err := checkPath(a.Path, true); err != nil {
		return nil, err
	}
	entries, more, err := fs.ListFiles(ctx, c, a.Path)
	if err != nil {
		return nil, err
	}
	if len(entries) > MaxListEntries {
		more += len(entries) - MaxListEntries
		entries = entries[:MaxListEntries]
	}
	if entries == nil {
		entries = []FileEntry{}
	}
	return &Result{Entries: entries, EntriesMore: more}, nil
}

// FileError is a file operation the sandbox's own filesystem failed (no such file, a read-only
// mount, permission denied): the tool ran and failed, as a program would, so the client gets
// the sandbox's words marked isError, with a result (exit_code 1, the words in stderr). It is
// not a refusal: no rule of the policy was asked.
type FileError struct{ Msg string }

func (e *FileError) Error() string { return e.Msg }

// ToolResult implements ToolError.
func (e *FileError) ToolResult() *Result { return &Result{ExitCode: 1, Stderr: e.Msg} }
