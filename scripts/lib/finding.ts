/** One reason npm run contract:gate fails: what is wrong, where, and why it matters (or what to do). */
export interface Finding {
  what: string;
  where: string;
  why: string;
}

export function formatFinding(finding: Finding): string {
  return `✗ ${finding.what}\n    where: ${finding.where}\n    why:   ${finding.why}`;
}
