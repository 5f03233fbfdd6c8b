using System;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using Falconet.Buffers;
using Falconet.Transport.Proxy;

namespace Falconet.Server;

/// <summary>
/// An endpoint whose every connection starts with a PROXY protocol header (version 1 or 2, as HAProxy, nginx, Envoy and cloud
/// load balancers send it): the client's address in it becomes the connection's remote endpoint. Wraps the endpoint to listen
/// on (an <see cref="IPEndPoint"/>, a <see cref="UnixDomainSocketEndPoint"/> or a <see cref="Transport.ListenSocketEndPoint"/>);
/// add it to <see cref="FalconetServerOptions.Endpoints"/>, or give it to an <see cref="HttpsEndpoint"/> (the header comes before
/// the TLS handshake).
/// </summary>
/// <remarks>
/// The endpoint takes nothing but PROXY (the spec forbids guessing): a connection without a valid header is closed, as is one
/// from outside <see cref="TrustedProxies"/>. See docs/deployment.md.
/// </remarks>
public sealed class ProxyProtocolEndPoint : EndPoint
{
    /// <summary>Listens on <paramref name="endPoint"/> and expects a PROXY header on every connection.</summary>
    public ProxyProtocolEndPoint(EndPoint endPoint)
    {
        ArgumentNullException.ThrowIfNull(endPoint);
        if (endPoint is ProxyProtocolEndPoint)
        {
            throw new ArgumentException("A PROXY protocol endpoint cannot wrap another one.", nameof(endPoint));
        }

        EndPoint = endPoint;
    }

    /// <summary>Where to listen.</summary>
    public EndPoint EndPoint { get; }

    /// <summary>
    /// The networks the proxies connect from (for example <c>IPNetwork.Parse("10.0.0.0/8")</c>); a connection from any other
    /// address is reset before anything is read (reason <c>proxy_untrusted_peer</c>). Empty (the default) trusts every peer:
    /// then only who can reach the endpoint (a firewall, a Unix socket's permissions) decides. A Unix-socket peer has no
    /// address and is always trusted.
    /// </summary>
    public IList<IPNetwork> TrustedProxies { get; } = new List<IPNetwork>();

    /// <summary>How long the header may take to arrive from the connect (default 5 s); checked by the heartbeat, so up to a second late.</summary>
    public TimeSpan HeaderTimeout { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>
    /// The largest version 2 header accepted, addresses and TLVs included (default and most 4096, one pool block; at least 232,
    /// a Unix address block). A larger one is refused (<c>proxy_header_too_large</c>).
    /// </summary>
    public int MaxHeaderSize { get; set; } = SlabMemoryPool.BlockSize;

    /// <inheritdoc/>
    public override AddressFamily AddressFamily => EndPoint.AddressFamily;

    /// <inheritdoc/>
    public override string ToString() => $"{EndPoint} (PROXY protocol)";

    /// <summary>Throws when a setting cannot be honoured, naming it.</summary>
    internal void Validate(string name)
    {
        if (HeaderTimeout <= TimeSpan.Zero)
        {
            throw new InvalidOperationException($"{name}.HeaderTimeout must be positive, not {HeaderTimeout}.");
        }

        if (MaxHeaderSize < ProxyHeaderParser.V2FixedLength + 216 || MaxHeaderSize > SlabMemoryPool.BlockSize)
        {
            throw new InvalidOperationException(
                $"{name}.MaxHeaderSize must be between {ProxyHeaderParser.V2FixedLength + 216} and {SlabMemoryPool.BlockSize}, not {MaxHeaderSize}.");
        }
    }

    /// <summary>A copy with the same settings, so that changing this one after the server started has no effect on it.</summary>
    internal ProxyProtocolEndPoint Copy()
    {
        var copy = new ProxyProtocolEndPoint(EndPoint) { HeaderTimeout = HeaderTimeout, MaxHeaderSize = MaxHeaderSize };
        foreach (IPNetwork network in TrustedProxies)
        {
            copy.TrustedProxies.Add(network);
        }

        return copy;
    }

    /// <summary>True when a connection from <paramref name="peer"/> may send a header (an IPv4-mapped IPv6 peer is matched as IPv4).</summary>
    internal bool Trusts(EndPoint? peer)
        => TrustedProxies.Count == 0 || peer is not IPEndPoint ip || TrustedNetworks.Contains(TrustedProxies, ip.Address);
}
