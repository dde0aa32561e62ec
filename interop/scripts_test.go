package interop

// The python clients the tests run. Each uses rsb-python's public API only.

const pyListener = `
import sys, threading, rsb
scope, want = sys.argv[1], int(sys.argv[2])
done, n = threading.Event(), [0]
def handle(ev):
    print("%s %s" % (ev.scope.to_string(), ev.data), flush=True)
    n[0] += 1
    if n[0] >= want:
        done.set()
with rsb.create_listener(scope) as l:
    l.add_handler(handle)
    print("READY", flush=True)
    done.wait(60)
    sys.stdin.read()
`

const pyInformer = `
import sys, rsb
scope, count = sys.argv[1], int(sys.argv[2])
with rsb.create_informer(scope, data_type=str) as inf:
    for i in range(count):
        inf.publish_data("hello%d" % i)
    print("SENT %d" % count, flush=True)
    sys.stdin.read()
`

const pyServer = `
import sys, rsb
def echo(x):
    return x
def fail(x):
    raise RuntimeError(x)
with rsb.create_local_server(sys.argv[1]) as s:
    s.add_method("echo", echo, str, str)
    s.add_method("fail", fail, str, str)
    print("READY", flush=True)
    sys.stdin.read()
`

const pyClient = `
import sys, rsb
with rsb.create_remote_server(sys.argv[1]) as s:
    print("RESULT %s" % s.echo("hi", timeout=20), flush=True)
    try:
        s.fail("boom", timeout=20)
        print("NOERROR", flush=True)
    except Exception as e:
        print("ERROR %s" % str(e).split(": ")[-1], flush=True)
    sys.stdin.read()
`
