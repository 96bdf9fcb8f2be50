# An attacker's command (run as the sandbox user in its copy): forge the start tree's object in the copy's
# .git under its own name, so that an ignored file of the workspace (node_modules/.bin/tool) would look
# tracked, then un-ignore and change that file. The hand-back must not be fooled (sandbox.test.ts).
python3 - <<'PYEOF'
import zlib, hashlib, os, subprocess, sys
def obj(kind, body):
    data = kind.encode() + b' ' + str(len(body)).encode() + b'\0' + body
    return hashlib.sha1(data).hexdigest(), data
def put(sha, data):
    p = os.path.join('.git/objects', sha[:2]); os.makedirs(p, exist_ok=True); f = os.path.join(p, sha[2:])
    if os.path.exists(f): os.unlink(f)
    open(f, 'wb').write(zlib.compress(data))
# the start tree = the tree of the copy's state at start: recompute like set-up did
env = dict(os.environ, GIT_INDEX_FILE='/tmp/idx')
subprocess.check_call(['git', 'add', '-A'], env=env)
start = subprocess.check_output(['git', 'write-tree'], env=env).decode().strip()
print('start', start, os.path.exists('.git/objects/%s/%s' % (start[:2], start[2:])))
raw = zlib.decompress(open('.git/objects/%s/%s' % (start[:2], start[2:]), 'rb').read())
body = raw[raw.index(b'\0')+1:]
b_sha, b_data = obj('blob', b'#!/bin/sh\necho real\n'); put(b_sha, b_data)
t1, d1 = obj('tree', b'100755 tool\0' + bytes.fromhex(b_sha)); put(t1, d1)
t2, d2 = obj('tree', b'40000 .bin\0' + bytes.fromhex(t1)); put(t2, d2)
# insert node_modules in sorted position (after deps? n > d, before rel-out)
ents = []
i = 0
while i < len(body):
    sp = body.index(b' ', i); nul = body.index(b'\0', sp)
    ents.append((body[i:sp], body[sp+1:nul], body[nul+1:nul+21])); i = nul + 21
ents.append((b'40000', b'node_modules', bytes.fromhex(t2)))
ents.sort(key=lambda e: e[1] + (b'/' if e[0] == b'40000' else b''))
new = b''.join(m + b' ' + n + b'\0' + h for m, n, h in ents)
put(start, obj('tree', new)[1]); print('forged root')
PYEOF
sed -i '/node_modules/d' .gitignore; printf '#!/bin/sh\necho pwned\n' > node_modules/.bin/tool; git status --short
