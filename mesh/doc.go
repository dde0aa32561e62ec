// Package mesh owns the FrameAdaptor registry of the mesh gateway: the
// table from a protocol name to the Adaptor that converts that protocol's
// messages to and from EventMeshFrames (package mesh/frame).
//
// Each protocol lives in a package of its own (mesh/cloudevents, …) that
// registers its Adaptor in an init function with Register; a program
// enables a protocol by importing its package, and adding a protocol needs
// no change here or in the daemon's runtime, which finds adaptors only by
// name (Lookup). Config names the adaptors a gateway serves; its Validate
// refuses a name no package registered, at configuration time, listing the
// names that are known.
//
// Counters are the counters every gateway listener keeps in one shape,
// whatever its protocol: events published and delivered, drops, refusals
// and closed connections each by a reason from the listener's fixed set,
// and the connections and subscriptions open. A listener creates them with
// NewCounters and feeds them; the daemon exports them as the
// rsbd_gateway_* families with the protocol as a label. Tokens are the
// bearer tokens every listener checks the same way: ParseTokens, then
// Lookup of the token a client presents (in constant time) and the
// Grant's MayPublish and MaySubscribe for a scope.
//
// The adaptors are participants of the bus through package client, never
// through the node's internals; this package holds no goroutines and does
// no I/O.
package mesh
