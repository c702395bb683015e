package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// Client calls the daemon's API; every call has a deadline.
type Client struct {
	Base    string
	Timeout time.Duration
	http    http.Client
}

// NewClient returns a client of the API at base whose calls each end after
// timeout.
func NewClient(base string, timeout time.Duration) *Client {
	return &Client{Base: base, Timeout: timeout, http: http.Client{Timeout: timeout}}
}

// Do sends one request and returns the status and body. A transport error
// (refused, reset, deadline) is returned as err with status 0.
func (c *Client) Do(ctx context.Context, method, path string, body []byte, out any) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, b, err
	}
	if out != nil && resp.StatusCode/100 == 2 {
		if err := json.Unmarshal(b, out); err != nil {
			return resp.StatusCode, b, fmt.Errorf("chaos: %s %s: decode: %w", method, path, err)
		}
	}
	return resp.StatusCode, b, nil
}

// Row is the part of a task row the harness reads.
type Row struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	Pending  int64  `json:"pending_count"`
	Position string `json:"position"`
	Version  uint64 `json:"version"`
}

// ListAll pages through GET /v1/tasks.
func (c *Client) ListAll(ctx context.Context) ([]Row, error) {
	var all []Row
	cursor := ""
	for {
		path := "/v1/tasks?limit=1000"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		var page struct {
			Tasks []Row  `json:"tasks"`
			Next  string `json:"next"`
		}
		status, b, err := c.Do(ctx, http.MethodGet, path, nil, &page)
		if err != nil {
			return nil, err
		}
		if status != http.StatusOK {
			return nil, fmt.Errorf("chaos: GET %s: %d %s", path, status, b)
		}
		all = append(all, page.Tasks...)
		if page.Next == "" {
			return all, nil
		}
		cursor = page.Next
	}
}
