package mesh

import "fmt"

// Config names the protocol adaptors a gateway serves. The zero value
// serves none: the gateway is off until configured.
type Config struct {
	// Adaptors are the protocol names to serve, each registered by an
	// imported adaptor package.
	Adaptors []string
}

// DefaultConfig returns the default configuration: no adaptors.
func DefaultConfig() Config { return Config{} }

// Validate checks every name is registered in the process's registry,
// once.
func (c Config) Validate() error { return c.ValidateIn(&defaultRegistry) }

// ValidateIn checks every name is registered in r, once.
func (c Config) ValidateIn(r *Registry) error {
	seen := make(map[string]bool, len(c.Adaptors))
	for _, name := range c.Adaptors {
		if seen[name] {
			return fmt.Errorf("%w: %q named twice in the configuration", ErrDuplicate, name)
		}
		seen[name] = true
		if _, err := r.Lookup(name); err != nil {
			return err
		}
	}
	return nil
}
