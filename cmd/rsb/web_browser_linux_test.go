package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/scope"
)

// screenshotPath is where TestWebInBrowser saves the page when
// RSBD_UPDATE_SCREENSHOT is set (the README shows it).
const screenshotPath = "../../docs/rsb-web.png"

// TestWebInBrowser opens rsb web's page, served against a daemon of a
// two-daemon cluster, in headless Chromium: it shows the hosts, processes
// and participants of the cluster, the scopes with their rates, the
// daemons, and an event published at the other daemon in the live tail.
func TestWebInBrowser(t *testing.T) {
	c := startIntrospectCluster(t)
	base := startWeb(t, c)
	page := openBrowser(t, base+"/?tail=/golden/")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pub, err := client.Dial(ctx, c.ds[0].URI())
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	inf, err := pub.NewInformer(scope.MustParse("/golden/camera/frames"))
	if err != nil {
		t.Fatal(err)
	}
	var hosts, scopes, tail, daemons string
	testutil.WaitForMsg(t, 90*time.Second, func() string {
		return fmt.Sprintf("the page to show the cluster and the event (peers: %v %v); hosts:\n",
			c.ds[0].Metric("rsbd_peers"), c.ds[1].Metric("rsbd_peers")) + hosts + "\nscopes:\n" + scopes + "\ntail:\n" + tail + "\ndaemons:\n" + daemons
	}, func() bool {
		for i := range 5 {
			inf.Publish(ctx, "frame "+string(rune('0'+i))+" from the bus")
		}
		hosts, scopes, tail, daemons = page.text("hosts"), page.text("scopes"), page.text("tail"), page.text("daemons")
		return strings.Contains(hosts, "/golden/listener/") && strings.Contains(hosts, "/golden/logged/") &&
			strings.Contains(hosts, "remote-server") && strings.Contains(hosts, "RUNNING") &&
			strings.Contains(scopes, "frames/") && strings.Contains(tail, "from the bus") &&
			strings.Contains(tail, "/golden/camera/frames/") && strings.Count(daemons, "peers") == 2
	})
	if os.Getenv("RSBD_UPDATE_SCREENSHOT") != "" {
		png, err := page.screenshot()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(screenshotPath, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
