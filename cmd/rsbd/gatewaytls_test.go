package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// testCA is a certificate authority made by a test, its certificate in
// a file.
type testCA struct {
	cert   *x509.Certificate
	key    *ecdsa.PrivateKey
	pool   *x509.CertPool
	pemOut string // path of the CA certificate file
}

// newTestCA makes a CA and writes its certificate to dir/ca.pem.
func newTestCA(t *testing.T, dir string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "rsbd test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	ca := &testCA{cert: cert, key: key, pool: x509.NewCertPool(), pemOut: filepath.Join(dir, "ca.pem")}
	ca.pool.AddCert(cert)
	writePEM(t, ca.pemOut, "CERTIFICATE", der)
	return ca
}

// issue writes a certificate signed by ca with serial (for 127.0.0.1 and
// localhost as a server, or as a client) to certPath and its key to
// keyPath.
func (ca *testCA) issue(t *testing.T, serial int64, client bool, certPath, keyPath string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "rsbd test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
	}
	if client {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, certPath, "CERTIFICATE", der)
	writePEM(t, keyPath, "PRIVATE KEY", kder)
}

// writePEM writes one PEM block to path, readable by its owner only.
func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// servedSerial returns the serial of the certificate a TLS handshake with
// a listener of tc gets, verified against ca.
func servedSerial(t *testing.T, tc *tls.Config, ca *testCA) int64 {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", tc)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			_ = c.(*tls.Conn).Handshake()
			c.Close()
		}
	}()
	c, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: ca.pool, ServerName: "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
}

// A reload serves the new certificate to the connections that follow; a
// reload that fails keeps the pair served.
func TestGatewayCertReload(t *testing.T) {
	dir := t.TempDir()
	ca := newTestCA(t, dir)
	cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	ca.issue(t, 100, false, cert, key)
	s, err := loadSecrets(gatewaySecurity{cert: cert, key: key}, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	tc, err := s.tlsConfig()
	if err != nil {
		t.Fatal(err)
	}
	if n := servedSerial(t, tc, ca); n != 100 {
		t.Fatalf("serial %d before reload", n)
	}
	ca.issue(t, 200, false, cert, key)
	s.reload()
	if n := servedSerial(t, tc, ca); n != 200 {
		t.Fatalf("serial %d after reload, want 200", n)
	}
	if err := os.WriteFile(key, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.reload()
	if n := servedSerial(t, tc, ca); n != 200 {
		t.Fatalf("serial %d after a failed reload, want 200 kept", n)
	}
	if _, err := loadSecrets(gatewaySecurity{cert: cert, key: key}, nil, slog.New(slog.DiscardHandler)); err == nil {
		t.Fatal("a bad key file starts the gateway")
	}
}

// Token files parse one token a line, and are refused when group or
// others may read them, or when they hold no token.
func TestTokenFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tokens")
	text := "# tokens\n\nrobot pub=/robot/,/x/ sub=/robot/\nreader sub=/robot/arm/\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens, err := readTokenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(tokens) != 2 || tokens[0].Value != "robot" || len(tokens[0].Publish) != 2 || tokens[0].Subscribe[0] != "/robot/" ||
		tokens[1].Value != "reader" || len(tokens[1].Publish) != 0 || tokens[1].Subscribe[0] != "/robot/arm/" {
		t.Errorf("tokens %+v", tokens)
	}
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := readTokenFile(path); !errors.Is(err, errTokenFileMode) {
		t.Errorf("mode 640: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "empty"), []byte("# none\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readTokenFile(filepath.Join(dir, "empty")); !errors.Is(err, errNoTokens) {
		t.Errorf("empty file: %v", err)
	}
	if _, err := parseTokenFile([]byte("tok pub:/robot/\n")); err == nil {
		t.Error("pub:/robot/ accepted")
	}
	if _, err := parseTokenFile([]byte("# c\ntok pub=robot\n")); err == nil || !strings.HasPrefix(err.Error(), "line 2:") {
		t.Errorf("bad prefix: %v", err)
	}
}

// The gateway's TLS files come from flags or the cascade; a certificate
// without its key, or client certificates without TLS, are refused with
// the key named.
func TestGatewaySecuritySettings(t *testing.T) {
	s, _ := mustSettings(t, "[rsbd]\ngateway.tls.key = k.pem\n", []string{"RSB_RSBD_GATEWAY_TOKEN_FILE=tok"},
		"--gateway-tls-cert", "c.pem", "--gateway-client-ca", "ca.pem")
	if want := (gatewaySecurity{cert: "c.pem", key: "k.pem", clientCA: "ca.pem", tokenFile: "tok"}); !reflect.DeepEqual(s.gatewaySec, want) {
		t.Errorf("settings %+v, want %+v", s.gatewaySec, want)
	}
	for _, args := range [][]string{
		{"--gateway-tls-cert", "c.pem"},
		{"--gateway-tls-key", "k.pem"},
		{"--gateway-client-ca", "ca.pem"},
	} {
		c, err := load(t, "", nil, args...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := parseSettings(c); err == nil || !strings.Contains(err.Error(), "rsbd.gateway.") {
			t.Errorf("%q: %v", args, err)
		}
	}
}

// clientAccepted reports whether a listener of tc completes a handshake
// with a client presenting the certificate in certPath and keyPath.
func clientAccepted(t *testing.T, tc *tls.Config, ca *testCA, certPath, keyPath string) bool {
	t.Helper()
	cc, err := tls.LoadX509KeyPair(certPath, keyPath)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", tc)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	result := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			result <- err
			return
		}
		defer c.Close()
		result <- c.(*tls.Conn).Handshake()
	}()
	c, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: ca.pool, ServerName: "localhost", Certificates: []tls.Certificate{cc}})
	if err == nil {
		// TLS 1.3 reports the server's refusal of the client certificate
		// on the first read, so the server's side decides.
		defer c.Close()
	}
	return <-result == nil
}

// A reload of the client CA file verifies the client certificates of the
// connections that follow against the new CA; a reload that fails keeps
// the pool in force.
func TestGatewayClientCAReload(t *testing.T) {
	dir := t.TempDir()
	ca := newTestCA(t, dir)
	cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	ca.issue(t, 100, false, cert, key)
	oldClient, oldKey := filepath.Join(dir, "old.pem"), filepath.Join(dir, "old-key.pem")
	ca.issue(t, 101, true, oldClient, oldKey)
	other := newTestCA(t, t.TempDir())
	newClient, newKey := filepath.Join(dir, "new.pem"), filepath.Join(dir, "new-key.pem")
	other.issue(t, 102, true, newClient, newKey)
	clientCA := filepath.Join(dir, "client-ca.pem")
	copyFile(t, ca.pemOut, clientCA)

	s, err := loadSecrets(gatewaySecurity{cert: cert, key: key, clientCA: clientCA}, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	tc, err := s.tlsConfig()
	if err != nil {
		t.Fatal(err)
	}
	if !clientAccepted(t, tc, ca, oldClient, oldKey) || clientAccepted(t, tc, ca, newClient, newKey) {
		t.Fatal("before reload: want the first CA's client only")
	}
	copyFile(t, other.pemOut, clientCA)
	s.reload()
	if clientAccepted(t, tc, ca, oldClient, oldKey) || !clientAccepted(t, tc, ca, newClient, newKey) {
		t.Fatal("after reload: want the second CA's client only")
	}
	if err := os.WriteFile(clientCA, []byte("no PEM here"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.reload()
	if !clientAccepted(t, tc, ca, newClient, newKey) {
		t.Fatal("after a failed reload: the second CA's pool is not kept")
	}
	if _, err := loadSecrets(gatewaySecurity{cert: cert, key: key, clientCA: clientCA}, nil, slog.New(slog.DiscardHandler)); !errors.Is(err, errClientCA) {
		t.Fatalf("a bad client CA file starts the gateway: %v", err)
	}
}

// copyFile copies the file at from to to, readable by its owner only.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// The WebSocket origins the gateway admits come from --gateway-origins or
// the cascade, comma-separated; a malformed pattern is refused with the key
// named.
func TestGatewayOriginsSetting(t *testing.T) {
	s, _ := mustSettings(t, "", nil, "--gateway-origins", "app.example:*, 127.0.0.1:*")
	if want := []string{"app.example:*", "127.0.0.1:*"}; !reflect.DeepEqual(s.gatewaySec.origins, want) {
		t.Errorf("origins %q, want %q", s.gatewaySec.origins, want)
	}
	c, err := load(t, "", nil, "--gateway-origins", "[bad")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parseSettings(c); err == nil || !strings.Contains(err.Error(), keyGatewayOrigins) {
		t.Errorf("a malformed pattern: %v", err)
	}
}
