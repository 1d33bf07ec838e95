package soak

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// errDown is a request that found no server running.
var errDown = errors.New("server down")

// client sends requests to whichever process the server runs.
type client struct {
	srv  *server
	http *http.Client
}

func newClient(srv *server, conns int) *client {
	return &client{srv: srv, http: &http.Client{
		Timeout:   15 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns * 2, IdleConnTimeout: time.Minute},
	}}
}

// do sends one request with bearer and the extra headers (name, value pairs) and returns the
// status and body. An error means no answer came: the server was down or died meanwhile.
func (c *client) do(method, path, bearer string, body []byte, headers ...string) (int, []byte, error) {
	base := c.srv.url()
	if base == "" {
		return 0, nil, errDown
	}
	req, err := http.NewRequest(method, base+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err
	}
	return resp.StatusCode, b, nil
}

// must sends one request that has to succeed with want, decoding the answer into out.
func (c *client) must(method, path, bearer string, body any, want int, out any) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	if body == nil {
		raw = nil
	}
	status, b, err := c.do(method, path, bearer, raw)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if status != want {
		return fmt.Errorf("%w: %s %s: got %d, want %d: %s", ErrStatus, method, path, status, want, b)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(b, out)
}
