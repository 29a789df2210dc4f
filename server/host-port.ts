// `host:port` as a URL or a message writes it: an IPv6 host in brackets.
export function hostPort(host: string, port: number): string {
  return `${host.includes(":") ? `[${host}]` : host}:${port}`;
}
