/** A name as one segment of a JSON pointer (RFC 6901): `~` is written `~0`, `/` `~1`. */
export function pointerSegment(name: string): string {
  return name.replaceAll("~", "~0").replaceAll("/", "~1");
}
