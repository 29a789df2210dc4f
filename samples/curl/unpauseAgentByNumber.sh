# End the pause of agent 1003.
curl --fail-with-body --silent --show-error ${AGENTD_CACERT:+--cacert} ${AGENTD_CACERT:+"$AGENTD_CACERT"} \
  -X POST -H "X-Auth-Token: $AGENTD_TOKEN" -w '%{http_code}\n' \
  "$AGENTD_URL/agents/by-number/1003/unpause"
