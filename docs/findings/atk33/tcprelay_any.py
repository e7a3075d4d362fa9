# tiny TCP -> unix socket relay (a local engine reached over tcp://, as DOCKER_HOST=tcp://0.0.0.0:2375 setups do)
import socket, threading, sys
L=socket.socket(); L.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); L.bind(("0.0.0.0", int(sys.argv[1]))); L.listen(64)
def pipe(a,b):
    try:
        while True:
            d=a.recv(65536)
            if not d: break
            b.sendall(d)
    except Exception: pass
    finally:
        try: b.shutdown(socket.SHUT_WR)
        except Exception: pass
while True:
    c,_=L.accept(); u=socket.socket(socket.AF_UNIX); u.connect("/var/run/docker.sock")
    threading.Thread(target=pipe,args=(c,u),daemon=True).start(); threading.Thread(target=pipe,args=(u,c),daemon=True).start()
