// Package socktest holds the fixtures the tests of the RSB socket packages
// (rsbsocket, frame, sockclient) share: real and made-up frame bodies and
// the introspection events that announce participants. Only tests import
// it.
package socktest
