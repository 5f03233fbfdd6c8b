using System;
using System.Net.Sockets;
using System.Text;

namespace Falconet.Server;

/// <summary>
/// Tells systemd about the service's state (sd_notify(3)) when it runs as <c>Type=notify</c>: <c>READY=1</c> once listening,
/// <c>STOPPING=1</c> when the stop begins. Nothing happens when <c>NOTIFY_SOCKET</c> is not set.
/// </summary>
public static class SystemdNotify
{
    /// <summary>Sends <paramref name="state"/> (such as "READY=1") to <c>NOTIFY_SOCKET</c>; false when it is not set or the send failed.</summary>
    public static bool Send(string state)
    {
        ArgumentNullException.ThrowIfNull(state);
        string? path = Environment.GetEnvironmentVariable("NOTIFY_SOCKET");
        if (string.IsNullOrEmpty(path))
        {
            return false;
        }

        if (path[0] == '@')
        {
            // An abstract socket: its name starts with a NUL byte.
            path = "\0" + path[1..];
        }

        try
        {
            using var socket = new Socket(AddressFamily.Unix, SocketType.Dgram, ProtocolType.Unspecified);
            socket.Connect(new UnixDomainSocketEndPoint(path));
            socket.Send(Encoding.UTF8.GetBytes(state));
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }
}
