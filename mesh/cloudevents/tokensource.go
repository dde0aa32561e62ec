package cloudevents

import "github.com/rsbd/rsbd/mesh"

// Tokens returns the bearer tokens in force, as SetTokens last set them
// (nil or empty: none), for listeners beside the gateway that check the
// same tokens.
func (g *Gateway) Tokens() *mesh.Tokens { return g.tokens.Load() }
