package sandbox

import (
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/executor"
)

// addPictures takes a result event's pictures into ex (issue 27): E2B's interpreter sends a
// display's png and jpeg in base64 and its svg as text. Each is described (name, type, size,
// sha256) and held within executor.BoundImages as it arrives, so what a call holds never passes
// MaxImagesBytes; past MaxResults pictures they are dropped and the call marked truncated. A
// field that is not base64 is a malformed stream (an error); one whose bytes are not the
// picture it names is described, not sent. An SVG (text) is redacted like every result text.
func (c *Client) addPictures(ex *Execution, ev *execEvent) error {
	for _, p := range []struct{ ext, val, mime string }{
		{"png", ev.PNG, "image/png"}, {"jpeg", ev.JPEG, "image/jpeg"}, {"svg", ev.SVG, "image/svg+xml"},
	} {
		if p.val == "" {
			continue
		}
		if len(ex.Images) >= MaxResults && !mutated("e2b-pictures-bound") {
			ex.Truncated = true
			continue
		}
		var data []byte
		if p.ext == "svg" {
			data = []byte(c.redactOut(p.val))
		} else {
			var err error
			// Jupyter's base64 may be wrapped in lines.
			data, err = base64.StdEncoding.DecodeString(strings.Map(dropSpace, p.val))
			if err != nil {
				return fmt.Errorf("run the code: the interpreter sent a %s that is not base64 (%v): refusing a malformed stream", p.ext, err)
			}
			if k := c.cfg.APIKey; k != "" && strings.Contains(string(data), k) {
				data = []byte(c.redactOut(string(data))) // the key never leaves, even inside a picture
			}
		}
		im := executor.NewImage(fmt.Sprintf("result-%d.%s", len(ex.Images)+1, p.ext), data)
		if im.MIMEType != p.mime {
			im.MIMEType, im.Data = p.mime, nil
			im.Omitted = fmt.Sprintf("not sent: the interpreter's %s field does not hold a %s picture", p.ext, p.ext)
		}
		ex.Images = append(ex.Images, im)
		if !mutated("e2b-pictures-bound") {
			ex.Images = executor.BoundImages(ex.Images)
		}
	}
	return nil
}

func dropSpace(r rune) rune {
	if r == '\n' || r == '\r' || r == ' ' || r == '\t' {
		return -1
	}
	return r
}
