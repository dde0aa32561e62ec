package testutil

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
)

// Get fetches path (such as /readyz) from the daemon's HTTP endpoints and
// returns the status code and body; a daemon in a network namespace is
// reached from inside it.
func (d *Daemon) Get(path string) (int, string, error) {
	c := http.Client{Timeout: HTTPTimeout}
	if ns := d.spec.Netns; ns != "" {
		c.Transport = &http.Transport{DisableKeepAlives: true,
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				return DialInNetns(ctx, ns, network, addr)
			}}
	}
	resp, err := c.Get("http://" + d.Info().Metrics + path)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxHTTPBody))
	return resp.StatusCode, string(b), err
}

// Scrape reads /metrics into a map from series (`name` or
// `name{label="v"}`, as exposed) to value.
func (d *Daemon) Scrape() (map[string]float64, error) {
	code, body, err := d.Get("/metrics")
	if err == nil && code != http.StatusOK {
		err = fmt.Errorf("status %d", code)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: /metrics: %w", d.spec.Name, err)
	}
	m := map[string]float64{}
	for line := range strings.Lines(body) {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if v, err := strconv.ParseFloat(line[i+1:], 64); i > 0 && err == nil {
			m[line[:i]] = v
		}
	}
	return m, nil
}

// Metrics is Scrape failing the test on an error; call it from the test's
// goroutine.
func (d *Daemon) Metrics() map[string]float64 {
	d.t.Helper()
	m, err := d.Scrape()
	if err != nil {
		d.t.Fatal(err)
	}
	return m
}

// Metric returns one series of Metrics (0 when absent).
func (d *Daemon) Metric(series string) float64 {
	d.t.Helper()
	return d.Metrics()[series]
}
