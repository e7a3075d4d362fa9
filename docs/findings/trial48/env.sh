export HOME=/tmp/trial48/home
export XDG_CONFIG_HOME=$HOME/.config XDG_STATE_HOME=$HOME/.local/state XDG_DATA_HOME=$HOME/.local/share XDG_CACHE_HOME=$HOME/.cache
export PATH=/tmp/trial48/node/node_modules/.bin:$HOME/bin:/usr/local/go/bin:/usr/local/bin:/usr/bin:/bin
unset GOFLAGS GOPATH GOCACHE GOMODCACHE
