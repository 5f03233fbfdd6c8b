using System.Net;
using System.Net.Sockets;

namespace Falconet.Http.Tests.Infrastructure;

/// <summary>What this machine offers of IPv6, for the tests that cannot run without it and then report themselves skipped.</summary>
internal static class Ipv6
{
    /// <summary>True when the system supports IPv6 sockets (binding <c>[::]</c>, dual mode).</summary>
    public static bool Supported => Socket.OSSupportsIPv6;

    /// <summary>True when a socket binds the IPv6 loopback <c>[::1]</c> here (supported, and the address configured).</summary>
    public static bool HasLoopback { get; } = CanBind(IPAddress.IPv6Loopback);

    private static bool CanBind(IPAddress address)
    {
        if (!Socket.OSSupportsIPv6)
        {
            return false;
        }

        try
        {
            using var socket = new Socket(AddressFamily.InterNetworkV6, SocketType.Stream, ProtocolType.Tcp);
            socket.Bind(new IPEndPoint(address, 0));
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }
}
