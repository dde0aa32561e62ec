package testutil

import (
	"io"
	"net/http"
	"testing"
)

// Do sends req with c and returns the response, its body read and closed,
// and the body; an error sending it fails the test.
func Do(t testing.TB, c *http.Client, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// Get fetches url with the default client and reads the whole reply; a
// request that fails ends the test.
func Get(t testing.TB, url string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return Do(t, http.DefaultClient, req)
}
