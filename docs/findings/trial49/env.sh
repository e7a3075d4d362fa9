export HOME=/tmp/trial49/home
export XDG_CONFIG_HOME=$HOME/.config XDG_STATE_HOME=$HOME/.local/state XDG_DATA_HOME=$HOME/.local/share XDG_CACHE_HOME=$HOME/.cache
export PATH=/tmp/trial49/node/node_modules/.bin:$HOME/bin:/usr/local/go/bin:/usr/local/bin:/usr/bin:/bin
# shared build and module caches (the machine's), so the build is warm
export GOCACHE=/root/.cache/go-build GOMODCACHE=/root/go/pkg/mod
unset GOFLAGS
