package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/docker/docker/api/types/image"
)

// Pull pulls an image through the engine, drawing one progress bar over all layers on w
// (a terminal, or serve's stderr).
func (c *Client) Pull(ctx context.Context, img string, w io.Writer) error {
	ref, err := ParseImage(img)
	if err != nil {
		return err
	}
	rc, err := c.API.ImagePull(ctx, ref.String(), image.PullOptions{})
	if err != nil {
		return fmt.Errorf("pull %s: %w", img, c.Unreachable(err))
	}
	defer rc.Close()
	type layer struct{ cur, total int64 }
	layers := map[string]*layer{}
	var order []string
	dec := json.NewDecoder(rc)
	for {
		var m struct {
			ID             string `json:"id"`
			Status         string `json:"status"`
			Error          string `json:"error"`
			ProgressDetail struct {
				Current int64 `json:"current"`
				Total   int64 `json:"total"`
			} `json:"progressDetail"`
		}
		if err := dec.Decode(&m); err == io.EOF {
			break
		} else if err != nil {
			return fmt.Errorf("pull %s: reading the engine's progress: %w", img, err)
		}
		if m.Error != "" {
			fmt.Fprintln(w)
			return fmt.Errorf("pull %s: %s", img, m.Error)
		}
		if m.ID != "" && m.Status == "Downloading" && m.ProgressDetail.Total > 0 {
			l, ok := layers[m.ID]
			if !ok {
				l = &layer{}
				layers[m.ID] = l
				order = append(order, m.ID)
			}
			l.cur, l.total = m.ProgressDetail.Current, m.ProgressDetail.Total
		}
		if m.ID != "" && (m.Status == "Download complete" || m.Status == "Already exists" || m.Status == "Pull complete") {
			if l, ok := layers[m.ID]; ok {
				l.cur = l.total
			}
		}
		var cur, total int64
		for _, id := range order {
			cur += layers[id].cur
			total += layers[id].total
		}
		fmt.Fprintf(w, "\r%s", Bar(cur, total, len(order)))
	}
	fmt.Fprintf(w, "\r%s\n", "pulled "+img+strings.Repeat(" ", 40))
	return nil
}

// Bar draws [#####     ] 45% 12.0/26.7 MB (3 layers).
func Bar(cur, total int64, layers int) string {
	const width = 30
	if total <= 0 {
		return fmt.Sprintf("[%s] waiting for the registry…", strings.Repeat(" ", width))
	}
	n := int(float64(width) * float64(cur) / float64(total))
	return fmt.Sprintf("[%s%s] %3d%% %.1f/%.1f MB (%d layers)", strings.Repeat("#", n), strings.Repeat(" ", width-n),
		100*cur/total, float64(cur)/1e6, float64(total)/1e6, layers)
}
