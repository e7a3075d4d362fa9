#!/usr/bin/env python3
# setacl.py PATH UID PERM : add a POSIX ACL entry user:UID:PERM (mask = PERM) to PATH, as setfacl -m would
# (setfacl is not installed on this VM). PERM is octal digit (6 = rw, 7 = rwx).
import os, struct, sys
p, uid, perm = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
m = os.stat(p).st_mode
u, g, o = (m >> 6) & 7, (m >> 3) & 7, m & 7
ents = [(1, u, 0xffffffff), (2, perm, uid), (4, g, 0xffffffff), (0x10, perm | g, 0xffffffff), (0x20, o, 0xffffffff)]
os.setxattr(p, 'system.posix_acl_access', struct.pack('<I', 2) + b''.join(struct.pack('<HHI', *e) for e in ents))
print(p, 'mode now', oct(os.stat(p).st_mode & 0o7777), 'ACL: user:%d:%o mask %o' % (uid, perm, perm | g))
