curl --fail-with-body --silent --show-error \
  ${AGENTD_CACERT:+--cacert} ${AGENTD_CACERT:+"$AGENTD_CACERT"} \
  -H "X-Auth-Token: $AGENTD_TOKEN" \
  "$AGENTD_URL/agents/by-number/1001"
