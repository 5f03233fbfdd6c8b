using System;
using System.Collections.Generic;
using System.Globalization;
using Falconet.Transport;

namespace Falconet.Server;

/// <summary>
/// The listening sockets systemd passes to a socket-activated service (<c>LISTEN_FDS</c>, <c>LISTEN_PID</c>,
/// <c>LISTEN_FDNAMES</c>, as sd_listen_fds(3) reads them): add them to <see cref="FalconetServerOptions.Endpoints"/> or an
/// <see cref="HttpsEndpoint"/>, and a restarted process goes on with the same sockets, their queued connections included.
/// </summary>
/// <remarks>
/// The sockets are meant for this process only when <c>LISTEN_PID</c> is its id (a child started by it sees the variables
/// too, and must not take them). <see cref="Take()"/> removes the variables, so that it happens once. The descriptors start at 3.
/// </remarks>
public static class SystemdSockets
{
    /// <summary>The first descriptor systemd passes (SD_LISTEN_FDS_START).</summary>
    public const int FirstDescriptor = 3;

    /// <summary>
    /// The sockets passed to this process, named after <c>LISTEN_FDNAMES</c> (null where none was given); empty when the
    /// process was not socket-activated. Clears the three variables from the environment.
    /// </summary>
    /// <exception cref="InvalidOperationException"><c>LISTEN_FDS</c> or <c>LISTEN_PID</c> is not a number.</exception>
    public static IReadOnlyList<ListenSocketEndPoint> Take() => Take(
        Environment.GetEnvironmentVariable("LISTEN_PID"), Environment.GetEnvironmentVariable("LISTEN_FDS"),
        Environment.GetEnvironmentVariable("LISTEN_FDNAMES"), Environment.ProcessId, clearEnvironment: true);

    /// <summary>Parses the variables as given (tests), for the process <paramref name="processId"/>.</summary>
    internal static IReadOnlyList<ListenSocketEndPoint> Take(string? listenPid, string? listenFds, string? listenFdNames, int processId, bool clearEnvironment)
    {
        if (string.IsNullOrEmpty(listenPid) || string.IsNullOrEmpty(listenFds))
        {
            return [];
        }

        if (!int.TryParse(listenPid, NumberStyles.None, CultureInfo.InvariantCulture, out int pid)
            || !int.TryParse(listenFds, NumberStyles.None, CultureInfo.InvariantCulture, out int count))
        {
            throw new InvalidOperationException($"LISTEN_PID '{listenPid}' and LISTEN_FDS '{listenFds}' must be numbers (systemd socket activation).");
        }

        if (pid != processId)
        {
            // Meant for another process: the parent that was activated, not this child.
            return [];
        }

        if (clearEnvironment)
        {
            Environment.SetEnvironmentVariable("LISTEN_PID", null);
            Environment.SetEnvironmentVariable("LISTEN_FDS", null);
            Environment.SetEnvironmentVariable("LISTEN_FDNAMES", null);
        }

        string[] names = listenFdNames?.Split(':') ?? [];
        var sockets = new ListenSocketEndPoint[count];
        for (int i = 0; i < count; i++)
        {
            string? name = i < names.Length && names[i].Length > 0 ? names[i] : null;
            sockets[i] = new ListenSocketEndPoint(FirstDescriptor + i, name);
        }

        return sockets;
    }
}
