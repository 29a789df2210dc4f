curl --fail-with-body --silent --show-error \
  ${AGENTD_CACERT:+--cacert} ${AGENTD_CACERT:+"$AGENTD_CACERT"} \
  -X POST -H "X-Auth-Token: $AGENTD_TOKEN" -w '\n%{http_code}\n' \
  "$AGENTD_URL/agents/by-number/1001/unpause"
