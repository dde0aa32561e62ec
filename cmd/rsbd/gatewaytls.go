package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/rsbd/rsbd/mesh"
	"github.com/rsbd/rsbd/mesh/cloudevents"
)

// Keys of the gateway's TLS and token settings (config.FlagKey of their
// flags).
const (
	keyGatewayTLSCert   = "rsbd.gateway.tls.cert"
	keyGatewayTLSKey    = "rsbd.gateway.tls.key"
	keyGatewayClientCA  = "rsbd.gateway.client.ca"
	keyGatewayTokenFile = "rsbd.gateway.token.file"
	keyGatewayOrigins   = "rsbd.gateway.origins"
)

// Errors of the gateway's security files.
var (
	errTokenFileMode = errors.New("token file is accessible by group or others (chmod 600 it)")
	errNoTokens      = errors.New("token file holds no token")
	errClientCA      = errors.New("client CA file holds no PEM certificate")
)

// gatewaySecurity names the files of the gateway's TLS and bearer tokens;
// empty fields are not configured.
type gatewaySecurity struct {
	cert, key string // TLS certificate chain and private key, PEM
	clientCA  string // CA certificates client certificates must chain to, PEM
	tokenFile string // bearer tokens, see parseTokenFile
	// origins are the host patterns (path.Match syntax, host:port) of the
	// other origins whose pages may open a WebSocket to the gateway.
	origins []string
}

// gatewaySecurity reads the gateway's TLS and token settings: a
// certificate needs its key, and client certificates need TLS.
func (r *reader) gatewaySecurity() gatewaySecurity {
	c := r.c
	s := gatewaySecurity{
		cert: strings.TrimSpace(c.String(keyGatewayTLSCert, "")), key: strings.TrimSpace(c.String(keyGatewayTLSKey, "")),
		clientCA: strings.TrimSpace(c.String(keyGatewayClientCA, "")), tokenFile: strings.TrimSpace(c.String(keyGatewayTokenFile, "")),
	}
	for _, o := range strings.Split(c.String(keyGatewayOrigins, ""), ",") {
		if o = strings.TrimSpace(o); o == "" {
			continue
		}
		if _, err := path.Match(o, ""); err != nil {
			r.fail(keyGatewayOrigins, "host patterns in path.Match syntax, comma-separated", err)
			continue
		}
		s.origins = append(s.origins, o)
	}
	switch {
	case s.cert != "" && s.key == "":
		r.fail(keyGatewayTLSKey, "the key file of "+keyGatewayTLSCert, nil)
	case s.key != "" && s.cert == "":
		r.fail(keyGatewayTLSCert, "the certificate file of "+keyGatewayTLSKey, nil)
	case s.clientCA != "" && s.cert == "":
		r.fail(keyGatewayClientCA, "none without "+keyGatewayTLSCert+" (client certificates need TLS)", nil)
	}
	return s
}

// gatewaySecrets are the gateway's certificate, client CA and tokens as
// loaded from their files; reload loads them again (on SIGHUP).
type gatewaySecrets struct {
	sec      gatewaySecurity
	gw       tokenSetter
	log      *slog.Logger
	cert     atomic.Pointer[tls.Certificate]
	clientCA atomic.Pointer[x509.CertPool]
}

// tokenSetter is a gateway listener taking the tokens of the token file:
// the CloudEvents gateway, the meshmessage listener.
type tokenSetter interface {
	SetTokens(tokens []mesh.Token) error
}

// loadSecrets loads the certificate, the client CA and the tokens sec
// names into gw; an error means the listener cannot start.
func loadSecrets(sec gatewaySecurity, gw tokenSetter, log *slog.Logger) (*gatewaySecrets, error) {
	s := &gatewaySecrets{sec: sec, gw: gw, log: log}
	if err := errors.Join(s.loadCert(), s.loadClientCA(), s.loadTokens()); err != nil {
		return nil, err
	}
	return s, nil
}

// loadClientCA loads the client CA file, if configured, and makes it the
// pool client certificates are verified against; on error the pool in
// force stays.
func (s *gatewaySecrets) loadClientCA() error {
	if s.sec.clientCA == "" {
		return nil
	}
	pem, err := os.ReadFile(s.sec.clientCA)
	if err != nil {
		return fmt.Errorf("gateway client CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return fmt.Errorf("gateway client CA %s: %w", s.sec.clientCA, errClientCA)
	}
	s.clientCA.Store(pool)
	return nil
}

// loadCert loads the certificate and key, if configured, and makes them
// the pair served; on error the pair served stays.
func (s *gatewaySecrets) loadCert() error {
	if s.sec.cert == "" {
		return nil
	}
	c, err := tls.LoadX509KeyPair(s.sec.cert, s.sec.key)
	if err != nil {
		return fmt.Errorf("gateway TLS: %w", err)
	}
	s.cert.Store(&c)
	return nil
}

// loadTokens loads the token file, if configured, into the gateway; on
// error the tokens in force stay.
func (s *gatewaySecrets) loadTokens() error {
	if s.sec.tokenFile == "" {
		return nil
	}
	tokens, err := readTokenFile(s.sec.tokenFile)
	if err == nil {
		err = s.gw.SetTokens(tokens)
	}
	if err != nil {
		return fmt.Errorf("gateway token file %s: %w", s.sec.tokenFile, err)
	}
	return nil
}

// reload loads the certificate, the client CA and the tokens again; what
// fails to load is logged and keeps its previous value.
func (s *gatewaySecrets) reload() {
	if err := s.loadCert(); err != nil {
		s.log.Error("gateway certificate not reloaded, the previous one stays", "err", err)
	} else if s.sec.cert != "" {
		s.log.Info("gateway certificate reloaded", "cert", s.sec.cert)
	}
	if err := s.loadClientCA(); err != nil {
		s.log.Error("gateway client CA not reloaded, the previous one stays", "err", err)
	} else if s.sec.clientCA != "" {
		s.log.Info("gateway client CA reloaded", "file", s.sec.clientCA)
	}
	if err := s.loadTokens(); err != nil {
		s.log.Error("gateway tokens not reloaded, the previous ones stay", "err", err)
	} else if s.sec.tokenFile != "" {
		s.log.Info("gateway tokens reloaded", "file", s.sec.tokenFile)
	}
}

// tlsConfig returns the listener's TLS configuration, nil without TLS.
// The certificate and the client CA pool are read per handshake, so a
// reload takes effect for the connections that follow.
func (s *gatewaySecrets) tlsConfig() (*tls.Config, error) {
	if s.sec.cert == "" {
		return nil, nil
	}
	tc := &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return s.cert.Load(), nil
		},
	}
	if s.sec.clientCA != "" {
		tc.ClientAuth = tls.RequireAndVerifyClientCert
		base := tc.Clone()
		tc.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
			c := base.Clone()
			c.ClientCAs = s.clientCA.Load()
			return c, nil
		}
	}
	return tc, nil
}

// watchHUP reloads s on every SIGHUP until the returned function is
// called; without files to reload it does nothing (SIGHUP keeps its
// default action).
func (s *gatewaySecrets) watchHUP() (stop func()) {
	if s.sec.cert == "" && s.sec.clientCA == "" && s.sec.tokenFile == "" {
		return func() {}
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-hup:
				s.reload()
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(hup)
		close(done)
	}
}

// readTokenFile reads the gateway's tokens from path, which must not be
// accessible by group or others, as an ssh key. One token a line:
//
//	TOKEN pub=/robot/,/x/ sub=/robot/
//
// pub lists the scope prefixes the token may publish to, sub those it may
// subscribe from (either may be absent); blank lines and lines starting
// with # are skipped. A file without a token is refused: it would turn
// authentication off.
func readTokenFile(path string) ([]cloudevents.Token, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Mode().Perm()&tokenFileForbiddenMode != 0 {
		return nil, fmt.Errorf("%w: mode %v", errTokenFileMode, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	tokens, err := parseTokenFile(b)
	if err == nil && len(tokens) == 0 {
		err = errNoTokens
	}
	return tokens, err
}

// parseTokenFile parses the lines of a token file (see readTokenFile).
func parseTokenFile(b []byte) ([]cloudevents.Token, error) {
	var out []cloudevents.Token
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		t := cloudevents.Token{Value: fields[0]}
		for _, f := range fields[1:] {
			k, v, _ := strings.Cut(f, "=")
			switch k {
			case "pub":
				t.Publish = append(t.Publish, strings.Split(v, ",")...)
			case "sub":
				t.Subscribe = append(t.Subscribe, strings.Split(v, ",")...)
			default:
				return nil, fmt.Errorf("line %d: %q is neither pub=SCOPES nor sub=SCOPES (comma-separated)", n, f)
			}
		}
		if err := (cloudevents.Config{Tokens: []cloudevents.Token{t}}).Validate(); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		out = append(out, t)
	}
	return out, sc.Err()
}
