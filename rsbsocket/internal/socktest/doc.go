// Package socktest holds the fixtures and helpers the tests of the RSB
// socket packages (rsbsocket, frame, sockclient) share: real and made-up
// frame bodies, the introspection events that announce participants, and
// a client dialled for the length of a test. Only tests import it; the
// tests of package frame that do are in package frame_test, since it
// imports sockclient, which imports frame.
package socktest
