package mqtt

import (
	"fmt"
	"hash/fnv"
	"net/url"
	"strconv"
	"strings"

	"github.com/rsbd/rsbd/bridge"
)

// Protocol versions a bridge speaks.
const (
	// Protocol5 is MQTT 5: binary mode by default.
	Protocol5 = "5"
	// Protocol311 is MQTT 3.1.1: structured mode only (no properties).
	Protocol311 = "3.1.1"
)

// Option keys of a [bridge.NAME] section of kind mqtt.
const (
	// OptProtocol chooses Protocol5 or Protocol311.
	OptProtocol = "protocol"
	// OptQoS is the QoS of the subscription and of published messages.
	OptQoS = "qos"
	// OptRetain passes retained messages: published events are retained,
	// and retained messages are read when subscribing.
	OptRetain = "retain"
	// OptClientID is the prefix of the bridge's MQTT client ids.
	OptClientID = "clientid"
)

// Config is what an MQTT bridge section says. Its zero value, with a URL,
// is an MQTT 5 bridge in binary mode at QoS 1.
type Config struct {
	// URL is the broker: mqtt://[user:password@]host:port (tcp:// also).
	URL string
	// Protocol is Protocol5 (the default, for "") or Protocol311.
	Protocol string
	// QoS is 0, 1 or 2; the default is 1 (QoS0 must be asked for with
	// ExplicitQoS).
	QoS byte
	// ExplicitQoS says QoS was set, so 0 is not the default.
	ExplicitQoS bool
	// Retain passes retained messages both ways.
	Retain bool
	// ClientID prefixes the client ids: "<ClientID>-in-<hash of the
	// filter>" and "<ClientID>-out-<hash of the topic>", the same at every
	// start so the broker resumes the receiver's session. The default is
	// "rsbd-<bridge name>".
	ClientID string
	// Format is the message format; bridge.FormatDefault is binary for
	// MQTT 5 and structured for 3.1.1.
	Format bridge.Format
}

// DefaultConfig returns the defaults: MQTT 5, binary, QoS 1, no retain.
func DefaultConfig() Config {
	return Config{Protocol: Protocol5, QoS: 1, Format: bridge.FormatBinary}
}

// Validate checks c and fills its defaults; the error wraps
// bridge.ErrSettings.
func (c *Config) Validate() error {
	if c.Protocol == "" {
		c.Protocol = Protocol5
	}
	if !c.ExplicitQoS && c.QoS == 0 {
		c.QoS = 1
	}
	if c.ClientID == "" {
		c.ClientID = "rsbd"
	}
	switch {
	case c.Protocol != Protocol5 && c.Protocol != Protocol311:
		return fmt.Errorf("%w: mqtt protocol %q (5 or 3.1.1)", bridge.ErrSettings, c.Protocol)
	case c.QoS > 2:
		return fmt.Errorf("%w: mqtt qos %d (0, 1 or 2)", bridge.ErrSettings, c.QoS)
	}
	u, err := url.Parse(c.URL)
	if err != nil || u.Host == "" || (u.Scheme != "mqtt" && u.Scheme != "tcp") {
		return fmt.Errorf("%w: mqtt url %q (mqtt://host:port)", bridge.ErrSettings, c.URL)
	}
	supported := []bridge.Format{bridge.FormatStructured, bridge.FormatRaw, bridge.FormatFrame}
	def := bridge.FormatStructured
	if c.Protocol == Protocol5 {
		supported, def = append(supported, bridge.FormatBinary), bridge.FormatBinary
	}
	s := bridge.Settings{Kind: Kind, Format: c.Format}
	if c.Format, err = s.CheckFormat(def, supported...); err != nil {
		return err
	}
	return nil
}

// configOf reads a bridge section's settings.
func configOf(s bridge.Settings) (Config, error) {
	if err := s.CheckOptions(OptProtocol, OptQoS, OptRetain, OptClientID); err != nil {
		return Config{}, err
	}
	c := Config{URL: s.URL, Protocol: s.Option(OptProtocol, Protocol5), Format: s.Format,
		ClientID: s.Option(OptClientID, "rsbd-"+s.Name)}
	if q := s.Option(OptQoS, ""); q != "" {
		n, err := strconv.ParseUint(q, 10, 8)
		if err != nil {
			return Config{}, fmt.Errorf("%w: mqtt bridge %s: qos %q", bridge.ErrSettings, s.Name, q)
		}
		c.QoS, c.ExplicitQoS = byte(n), true
	}
	if r := s.Option(OptRetain, "false"); r != "" {
		b, err := strconv.ParseBool(r)
		if err != nil {
			return Config{}, fmt.Errorf("%w: mqtt bridge %s: retain %q", bridge.ErrSettings, s.Name, r)
		}
		c.Retain = b
	}
	if err := c.Validate(); err != nil {
		return Config{}, fmt.Errorf("mqtt bridge %s: %w", s.Name, err)
	}
	return c, nil
}

// clientID returns the client id of one side of the bridge: stable across
// starts for the same address, distinct between addresses.
func (c *Config) clientID(dir, address string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(address))
	return fmt.Sprintf("%s-%s-%08x", c.ClientID, dir, h.Sum32())
}

// credentials returns the user name and password of the URL.
func (c *Config) credentials() (user, password string) {
	u, err := url.Parse(c.URL)
	if err != nil || u.User == nil {
		return "", ""
	}
	p, _ := u.User.Password()
	return u.User.Username(), p
}

// serverURL returns the URL with the scheme the client library wants and
// without credentials.
func (c *Config) serverURL(scheme string) *url.URL {
	u, _ := url.Parse(c.URL)
	v := *u
	v.User = nil
	v.Scheme = scheme
	v.Path = strings.TrimSuffix(v.Path, "/")
	return &v
}
