using System;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;

namespace Falconet.Server;

/// <summary>The forwarding headers a <see cref="ForwardedHeadersPolicy"/> reads.</summary>
[Flags]
public enum ForwardedHeaderFields
{
    /// <summary>None.</summary>
    None = 0,

    /// <summary><c>X-Forwarded-For</c>: the client's address, and the addresses of the proxies in between.</summary>
    XForwardedFor = 1,

    /// <summary><c>X-Forwarded-Proto</c>: the scheme the client used (<c>http</c> or <c>https</c>).</summary>
    XForwardedProto = 2,

    /// <summary><c>X-Forwarded-Host</c>: the Host the client sent.</summary>
    XForwardedHost = 4,

    /// <summary>
    /// <c>Forwarded</c> (RFC 7239): <c>for</c>, <c>proto</c> and <c>host</c> in one header. When a request has it, it is
    /// read instead of the <c>X-Forwarded-*</c> headers.
    /// </summary>
    Forwarded = 8,
}

/// <summary>
/// Applies the forwarding headers an HTTP reverse proxy sets (<c>Forwarded</c>, <c>X-Forwarded-For</c>, <c>-Proto</c>,
/// <c>-Host</c>) to the request's <see cref="Http.HttpContext.RemoteEndPoint"/>, <see cref="Http.HttpRequest.Scheme"/> and
/// <see cref="Http.HttpRequest.Host"/>, only on connections from <see cref="TrustedProxies"/>. Set it as
/// <see cref="FalconetServerOptions.ForwardedHeaders"/>; see docs/deployment.md.
/// </summary>
/// <remarks>
/// The list is read from the nearest proxy back (right to left): the entry the trusted peer added names the hop before it;
/// while that hop is a trusted proxy too, the entry before it is read, and so on. The first hop outside
/// <see cref="TrustedProxies"/> is the client; anything further left was written by the client and is ignored. A malformed
/// entry ends the walk: what the hops after it said stands.
/// </remarks>
public sealed class ForwardedHeadersPolicy
{
    /// <summary>Which headers are read (default <c>X-Forwarded-For</c> and <c>X-Forwarded-Proto</c>, what nginx and HAProxy set).</summary>
    public ForwardedHeaderFields Headers { get; set; } = ForwardedHeaderFields.XForwardedFor | ForwardedHeaderFields.XForwardedProto;

    /// <summary>
    /// The networks the proxies connect from (for example <c>IPNetwork.Parse("10.0.0.0/8")</c>); a request on a connection from
    /// any other address keeps its own remote endpoint, scheme and host, whatever headers it carries. It must not be empty
    /// when the server listens on anything but Unix domain sockets: trusting every peer is <c>0.0.0.0/0</c> and <c>::/0</c>,
    /// said explicitly, and right only where nothing but the proxy can reach the server. A Unix-socket peer has no address and
    /// is always trusted (the socket's permissions decide who connects), as on a <see cref="ProxyProtocolEndPoint"/>.
    /// </summary>
    public IList<IPNetwork> TrustedProxies { get; } = new List<IPNetwork>();

    /// <summary>Throws when the policy cannot be honoured, naming the setting; <paramref name="tcpEndpoint"/> names an endpoint with IP peers, if any.</summary>
    internal void Validate(string name, string? tcpEndpoint)
    {
        if (Headers == ForwardedHeaderFields.None || (Headers & ~(ForwardedHeaderFields.XForwardedFor | ForwardedHeaderFields.XForwardedProto
            | ForwardedHeaderFields.XForwardedHost | ForwardedHeaderFields.Forwarded)) != 0)
        {
            throw new InvalidOperationException($"{name}.Headers is {Headers}: name at least one of XForwardedFor, XForwardedProto, XForwardedHost and Forwarded.");
        }

        if (TrustedProxies.Count == 0 && tcpEndpoint is not null)
        {
            throw new InvalidOperationException(
                $"{name}.TrustedProxies is empty while {tcpEndpoint} takes connections from IP addresses: add the networks your proxies connect from (0.0.0.0/0 and ::/0 trust every peer).");
        }
    }

    /// <summary>A copy with the same settings, so that changing this one after the server started has no effect on it.</summary>
    internal ForwardedHeadersPolicy Copy()
    {
        var copy = new ForwardedHeadersPolicy { Headers = Headers };
        foreach (IPNetwork network in TrustedProxies)
        {
            copy.TrustedProxies.Add(network);
        }

        return copy;
    }

    /// <summary>
    /// True when a connection's peer is a trusted proxy: an address in <see cref="TrustedProxies"/>, or a Unix-socket peer (which
    /// some transports give no endpoint at all, so the connection's own <paramref name="local"/> endpoint says it).
    /// </summary>
    internal bool Trusts(EndPoint? peer, EndPoint? local)
        => peer is IPEndPoint ip ? TrustedNetworks.Contains(TrustedProxies, ip.Address) : (peer ?? local) is UnixDomainSocketEndPoint;
}
