using System.Collections.Generic;
using System.Net;

namespace Falconet.Server;

/// <summary>
/// Whether an address lies in one of a list of networks: the trust check shared by PROXY protocol endpoints
/// (<see cref="ProxyProtocolEndPoint.TrustedProxies"/>) and forwarded headers (<see cref="ForwardedHeadersPolicy.TrustedProxies"/>).
/// </summary>
internal static class TrustedNetworks
{
    /// <summary>True when <paramref name="address"/> is in one of <paramref name="networks"/>; an IPv4-mapped IPv6 address is matched as IPv4.</summary>
    public static bool Contains(IList<IPNetwork> networks, IPAddress address)
    {
        if (address.IsIPv4MappedToIPv6)
        {
            address = address.MapToIPv4();
        }

        for (int i = 0; i < networks.Count; i++)
        {
            if (networks[i].Contains(address))
            {
                return true;
            }
        }

        return false;
    }
}
