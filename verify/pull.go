package verify

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// PullImage pulls an image through the engine API, drawing one progress bar over all layers.
func PullImage(ctx context.Context, cl *http.Client, image string, w io.Writer) error {
	name, tag := image, "latest"
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		name, tag = image[:i], image[i+1:]
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost,
		"http://docker/images/create?fromImage="+url.QueryEscape(name)+"&tag="+url.QueryEscape(tag), nil)
	resp, err := cl.Do(req)
	if err != nil {
		return fmt.Errorf("pull %s: %w (is the engine running?)", image, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("pull %s: engine answered %s: %s", image, resp.Status, strings.TrimSpace(string(b)))
	}
	type layer struct{ cur, total int64 }
	layers := map[string]*layer{}
	var order []string
	dec := json.NewDecoder(resp.Body)
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
			return fmt.Errorf("pull %s: reading the engine's progress: %w", image, err)
		}
		if m.Error != "" {
			fmt.Fprintln(w)
			return fmt.Errorf("pull %s: %s", image, m.Error)
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
		fmt.Fprintf(w, "\r%s", bar(cur, total, len(order)))
	}
	fmt.Fprintf(w, "\r%s\n", "pulled "+image+strings.Repeat(" ", 40))
	return nil
}

// bar draws [#####     ] 45% 12.0/26.7 MB (3 layers).
func bar(cur, total int64, layers int) string {
	const width = 30
	if total <= 0 {
		return fmt.Sprintf("[%s] waiting for the registry…", strings.Repeat(" ", width))
	}
	n := int(float64(width) * float64(cur) / float64(total))
	return fmt.Sprintf("[%s%s] %3d%% %.1f/%.1f MB (%d layers)", strings.Repeat("#", n), strings.Repeat(" ", width-n),
		100*cur/total, float64(cur)/1e6, float64(total)/1e6, layers)
}
