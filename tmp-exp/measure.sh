cd /work/wt/change-feed
source /opt/node/env24.sh
pkill -f "clinic-api.js serve"
node node_modules/typescript/bin/tsc -p tsconfig.build.json --outDir bench/.build/worktree/dist --sourceMap false || exit 1
read CL KEY < /tmp/cf/key.txt
(cd /tmp/cf && DATA_DIR=/tmp/cf/data LOG_LEVEL=warn RATE_LIMIT_RPS=100000 RATE_LIMIT_BURST=1000000 PORT=3555 node /work/wt/change-feed/bench/.build/worktree/bin/clinic-api.js serve > /tmp/cf/serve.log 2>&1 &)
sleep 3
PID=$(pgrep -f "clinic-api.js serve" | head -1); BPID=$(pgrep -f "bench/bare-route.ts" | tail -1)
CUR=$(curl -s -H "Authorization: Bearer $KEY" "http://127.0.0.1:3555/api/v1/eventos?cursor=now" | python3 -c "import json,sys;print(json.load(sys.stdin)['next_cursor'])")
URL="http://127.0.0.1:3555/api/v1/eventos?cursor=$CUR&limit=500"
ET=$(curl -s -D - -o /dev/null -H "Authorization: Bearer $KEY" "$URL" | grep -i etag | tr -d '\r' | cut -d' ' -f2)
echo "$URL $ET" > /tmp/cf/url.txt
ut() { awk '{print $14, $15}' /proc/$1/stat; }
node tmp-exp/ac.mjs "$URL" "$KEY" "$ET" 2 > /dev/null
for target in svc bare svc bare svc bare; do if [ $target = svc ]; then P=$PID; U="$URL"; E="$ET"; else P=$BPID; U="http://127.0.0.1:3556/bare/304"; E='"bare"'; fi; read U0 S0 <<< $(ut $P); OUT=$(node tmp-exp/ac.mjs "$U" "$KEY" "$E" 5); read U1 S1 <<< $(ut $P); T=$(echo "$OUT" | awk '{print $NF}'); echo "$target $(echo $OUT | cut -d' ' -f1-3) user_ms=$(python3 -c "print(round(($U1-$U0)*10/$T,4))") sys_ms=$(python3 -c "print(round(($S1-$S0)*10/$T,4))")"; done; uptime
