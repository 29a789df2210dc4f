import ipaddr from "ipaddr.js";

/**
 * The client a rate budget belongs to: its IPv4 address, or the /64 of its
 * IPv6 address. One IPv6 host usually holds a whole /64, so keying by the
 * full address would give it 2^64 budgets. An IPv4 address mapped into
 * IPv6 (`::ffff:192.0.2.1`, as a dual-stack listener reports it) counts as
 * that IPv4 address.
 */
export function addressGroup(ip: string | undefined): string {
  if (ip === undefined || !ipaddr.isValid(ip)) return "unknown";
  const address = ipaddr.process(ip);
  if (address.kind() === "ipv4") return address.toString();
  const parts = (address as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16));
  return `${parts.join(":")}::/64`;
}
