#!/bin/bash
# usage: _cpu.sh PID URL DUR [HEADERS]
PID=$1; URL=$2; DUR=$3; H=$4
u0=$(awk '{print $14}' /proc/$PID/stat); s0=$(awk '{print $15}' /proc/$PID/stat)
out=$(taskset -c 0 node bench/_ac.mjs "$URL" "$DUR" "$H")
u1=$(awk '{print $14}' /proc/$PID/stat); s1=$(awk '{print $15}' /proc/$PID/stat)
echo "$out" | node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const r=JSON.parse(s);const req=r.rps*$DUR;const u=($u1-$u0)*10, k=($s1-$s0)*10;console.log(Math.round(r.rps),'req/s p50',r.p50,r.codes.join(), 'user us/req', (u*1000/req).toFixed(1), 'sys us/req', (k*1000/req).toFixed(1), 'util', ((u+k)/($DUR*1000)).toFixed(2))})"
