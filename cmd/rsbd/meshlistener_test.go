package main

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/mesh/meshmessage"
)

// meshConn is a meshmessage client of the daemon's tests.
type meshConn struct {
	t  *testing.T
	nc net.Conn
}

// send writes a Package of cmd with body (JSON).
func (c meshConn) send(cmd meshmessage.Command, seq string, body any) {
	c.t.Helper()
	p := &meshmessage.Package{Header: meshmessage.Header{Command: cmd, Seq: seq}}
	if body != nil {
		p.Body, _ = json.Marshal(body)
	}
	b, err := meshmessage.Marshal(p)
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatal(err)
	}
}

// recv reads the next Package, which must be cmd.
func (c meshConn) recv(cmd meshmessage.Command) *meshmessage.Package {
	c.t.Helper()
	_ = c.nc.SetReadDeadline(time.Now().Add(20 * time.Second))
	p, err := meshmessage.Read(c.nc)
	if err != nil || p.Header.Command != cmd {
		c.t.Fatalf("waiting for %s: %+v, %v", cmd, p, err)
	}
	return p
}

// TestMeshListenerServes runs the daemon with --gateway-meshmessage: a
// client's message reaches a subscriber of its own, the connection shows
// in the metrics labelled meshmessage, and SIGTERM says SERVER_GOODBYE
// before the connection closes.
func TestMeshListenerServes(t *testing.T) {
	d := startServing(t, filepath.Join(t.TempDir(), "ready.json"), "--gateway-meshmessage", "127.0.0.1:0")
	if d.info.MeshMessage == "" {
		t.Fatal("the ready file has no meshmessage address")
	}
	nc, err := net.Dial("tcp", d.info.MeshMessage)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := meshConn{t, nc}
	c.send(meshmessage.HelloRequest, "1", meshmessage.UserAgent{Subsystem: "test"})
	c.recv(meshmessage.HelloResponse)
	c.send(meshmessage.SubscribeRequest, "2", meshmessage.Subscription{Topics: []meshmessage.SubscriptionItem{{Topic: "/robot/"}}})
	c.recv(meshmessage.SubscribeResponse)
	c.send(meshmessage.ListenRequest, "3", nil)
	c.recv(meshmessage.ListenResponse)
	testutil.WaitFor(t, 20*time.Second, "its own message", func() bool {
		c.send(meshmessage.AsyncMessageToServer, "4", meshmessage.Message{Topic: "/robot/arm/", Body: "hi"})
		for {
			_ = c.nc.SetReadDeadline(time.Now().Add(20 * time.Second))
			p, err := meshmessage.Read(c.nc)
			if err != nil {
				t.Fatal(err)
			}
			if p.Header.Command == meshmessage.AsyncMessageToClient {
				return true
			}
			if p.Header.Command == meshmessage.AsyncMessageToServerAck && p.Header.Code != 0 {
				t.Fatalf("ACK %+v", p.Header)
			}
			if p.Header.Command == meshmessage.AsyncMessageToServerAck {
				return false
			}
		}
	})
	m := metricsText(t, d)
	for _, want := range []string{`rsbd_gateway_connections{protocol="meshmessage"} 1`, `rsbd_gateway_subscribers{protocol="meshmessage"} 1`} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	d.signals <- syscall.SIGTERM
	for {
		_ = c.nc.SetReadDeadline(time.Now().Add(20 * time.Second))
		p, err := meshmessage.Read(c.nc)
		if err != nil {
			t.Fatalf("no SERVER_GOODBYE before the connection ended: %v", err)
		}
		if p.Header.Command == meshmessage.ServerGoodbyeRequest {
			break
		}
	}
	if _, err := meshmessage.Read(c.nc); !errors.Is(err, io.EOF) {
		t.Fatalf("after SERVER_GOODBYE: %v", err)
	}
	if code := <-d.done; code != exitOK {
		t.Fatalf("exit %d:\n%s", code, d.stderr.String())
	}
}

// TestMeshListenerTLSAndTokens runs the listener with the gateway's TLS
// certificate and token file: a TLS client's HELLO with a known token is
// admitted, with an unknown one refused (code 2) and closed; SIGHUP
// reloads the token file.
func TestMeshListenerTLSAndTokens(t *testing.T) {
	dir := t.TempDir()
	ca := newTestCA(t, dir)
	cert, key, tokens := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"), filepath.Join(dir, "tokens")
	ca.issue(t, 10, false, cert, key)
	if err := os.WriteFile(tokens, []byte("robot-token pub=/robot/ sub=/robot/\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startServing(t, filepath.Join(dir, "ready.json"), "--gateway-meshmessage", "127.0.0.1:0",
		"--gateway-tls-cert", cert, "--gateway-tls-key", key, "--gateway-token-file", tokens)
	defer func() {
		d.signals <- syscall.SIGTERM
		<-d.done
	}()
	hello := func(token string) *meshmessage.Package {
		nc, err := tls.Dial("tcp", d.info.MeshMessage, &tls.Config{RootCAs: ca.pool, MinVersion: tls.VersionTLS12})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = nc.Close() })
		c := meshConn{t, nc}
		c.send(meshmessage.HelloRequest, "1", meshmessage.UserAgent{Token: token})
		return c.recv(meshmessage.HelloResponse)
	}
	if p := hello("robot-token"); p.Header.Code != meshmessage.CodeSuccess {
		t.Fatalf("known token: %+v", p.Header)
	}
	if p := hello("other-token"); p.Header.Code != meshmessage.CodeACLFail {
		t.Fatalf("unknown token: %+v", p.Header)
	}
	if plain, err := net.Dial("tcp", d.info.MeshMessage); err == nil {
		c := meshConn{t, plain}
		c.send(meshmessage.HelloRequest, "1", meshmessage.UserAgent{Token: "robot-token"})
		_ = plain.SetReadDeadline(time.Now().Add(20 * time.Second))
		if p, err := meshmessage.Read(plain); err == nil {
			t.Fatalf("plain TCP answered: %+v", p.Header)
		}
		plain.Close()
	}

	if err := os.WriteFile(tokens, []byte("other-token pub=/robot/\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 20*time.Second, "the reloaded token", func() bool {
		return hello("other-token").Header.Code == meshmessage.CodeSuccess
	})
	if p := hello("robot-token"); p.Header.Code != meshmessage.CodeACLFail {
		t.Fatalf("removed token: %+v", p.Header)
	}
}
