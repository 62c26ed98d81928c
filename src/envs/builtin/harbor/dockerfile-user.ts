/**
 * The user a task image's processes run as: the last `USER` of its Dockerfile's final
 * stage, null for root or none. The Worker build needs it because it appends edgegym's box
 * server as the image's ENTRYPOINT, run as root (it must run commands as any user), so the
 * image's own USER would be lost; Harbor runs the agent's commands as that USER.
 */
export function dockerfileUser(dockerfile: string): string | null {
  let user: string | null = null;
  // Continuation lines joined first: `USER \` + newline + `app` is one instruction.
  for (const line of dockerfile.replace(/\\\r?\n/g, " ").split(/\r?\n/)) {
    if (/^\s*FROM\s/i.test(line)) user = null;
    const match = /^\s*USER\s+(\S+)/i.exec(line);
    if (match) user = match[1] as string;
  }
  if (user?.includes("$")) throw new Error(`the Dockerfile's USER ${user} is a build variable; name the user in task.toml ([agent].user) or write it out`);
  return user === "root" || user === "0" || user === "0:0" ? null : user;
}
