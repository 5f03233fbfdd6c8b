using System;
using System.Net;
using Falconet.Server;
using Falconet.Transport;
using Microsoft.Extensions.Primitives;

namespace Falconet.Http;

/// <summary>
/// What the forwarding headers of the current request say, under a <see cref="ForwardedHeadersPolicy"/>: made once per
/// connection when the server has a policy, reset for every request, and read on first use (a request whose handler never
/// asks for its remote endpoint, scheme or host costs nothing more). What each of the nearest hops named (its endpoint and
/// host) is kept across requests, hop by hop, so a connection whose proxies name the same chain again allocates nothing.
/// </summary>
internal sealed class ForwardedResolver
{
    // The longest node text kept for reuse: a bracketed IPv6 address with an embedded IPv4 tail and a port.
    private const int MaxCachedNode = 64;

    // The hops, from the nearest, whose values are kept for reuse: a client behind a CDN and a load balancer is three.
    private const int MaxCachedHops = 4;

    private readonly ForwardedHeadersPolicy _policy;
    private readonly TransportConnection _transport;
    private readonly HttpRequest _request;
    private bool _resolved;
    private IPEndPoint? _remote;
    private string? _scheme;
    private string? _host;

    // Whether the connection's peer is trusted, checked at the first request: the PROXY decorator sets the peer before that.
    private bool _peerChecked;
    private bool _peerTrusted;

    // The node texts of the cached hops, MaxCachedNode characters each: the nearest hop's only until a deeper one is cached.
    private char[] _hopNodes = new char[MaxCachedNode];
    private readonly CachedHop[] _hops = new CachedHop[MaxCachedHops];

    public ForwardedResolver(ForwardedHeadersPolicy policy, TransportConnection transport, HttpRequest request)
    {
        _policy = policy;
        _transport = transport;
        _request = request;
    }

    /// <summary>Forgets the previous request's values.</summary>
    public void Reset()
    {
        _resolved = false;
        _remote = null;
        _scheme = null;
        _host = null;
    }

    /// <summary>The client's endpoint the trusted proxies named, or null when they named none.</summary>
    public IPEndPoint? RemoteEndPoint
    {
        get
        {
            Resolve();
            return _remote;
        }
    }

    /// <summary>"http" or "https" as the trusted proxies said, or null when they said nothing.</summary>
    public string? Scheme
    {
        get
        {
            Resolve();
            return _scheme;
        }
    }

    /// <summary>The Host the trusted proxies said the client sent, or null when they said nothing.</summary>
    public string? Host
    {
        get
        {
            Resolve();
            return _host;
        }
    }

    private void Resolve()
    {
        if (_resolved)
        {
            return;
        }

        _resolved = true;
        if (!_peerChecked)
        {
            _peerChecked = true;
            _peerTrusted = _policy.Trusts(_transport.RemoteEndPoint, _transport.LocalEndPoint);
        }

        if (!_peerTrusted)
        {
            return;
        }

        RequestHeaders headers = _request.Headers;
        ForwardedHeaderFields fields = _policy.Headers;
        StringValues forwarded = (fields & ForwardedHeaderFields.Forwarded) != 0 ? headers.Forwarded : default;
        if (forwarded.Count != 0)
        {
            ResolveForwarded(forwarded);
        }
        else
        {
            ResolveXForwarded(headers, fields);
        }
    }

    // RFC 7239: one element per hop, with its for, proto and host together.
    private void ResolveForwarded(StringValues forwarded)
    {
        var elements = new ForwardedListReader(forwarded);
        for (int hop = 0; elements.TryReadPrevious(out ReadOnlySpan<char> element, out bool malformed); hop++)
        {
            if (malformed || !ForwardedValues.TryParseElement(element, out ReadOnlySpan<char> node, out ReadOnlySpan<char> proto, out ReadOnlySpan<char> host))
            {
                return;
            }

            if (!ApplyHop(hop, node, rfc7239: true, proto, host))
            {
                return;
            }
        }
    }

    // The X-Forwarded-* lists side by side: the i-th entry from the right of each describes the same hop.
    private void ResolveXForwarded(RequestHeaders headers, ForwardedHeaderFields fields)
    {
        var addresses = new ForwardedListReader((fields & ForwardedHeaderFields.XForwardedFor) != 0 ? headers.XForwardedFor : default);
        var protos = new ForwardedListReader((fields & ForwardedHeaderFields.XForwardedProto) != 0 ? headers.XForwardedProto : default);
        var hosts = new ForwardedListReader((fields & ForwardedHeaderFields.XForwardedHost) != 0 ? headers.XForwardedHost : default);
        for (int hop = 0; ; hop++)
        {
            bool hasNode = addresses.TryReadPrevious(out ReadOnlySpan<char> node, out bool badNode);
            bool hasProto = protos.TryReadPrevious(out ReadOnlySpan<char> proto, out bool badProto);
            bool hasHost = hosts.TryReadPrevious(out ReadOnlySpan<char> host, out bool badHost);
            if (!(hasNode || hasProto || hasHost) || badNode || badProto || badHost
                || !ApplyHop(hop, node, rfc7239: false, proto, host))
            {
                return;
            }
        }
    }

    /// <summary>
    /// Takes what one hop (0 the nearest) said, all of it or nothing; true when its address is a trusted proxy, so the hop before it
    /// may be read.
    /// </summary>
    private bool ApplyHop(int hop, ReadOnlySpan<char> node, bool rfc7239, ReadOnlySpan<char> proto, ReadOnlySpan<char> host)
    {
        string? scheme = null;
        if (!proto.IsEmpty && (scheme = ForwardedValues.ParseScheme(proto)) is null)
        {
            return false;
        }

        if (!host.IsEmpty && !UriAuthority.IsHostAndPort(host, requirePort: false))
        {
            return false;
        }

        IPEndPoint? endpoint = null;
        bool unknown = node.IsEmpty;
        if (!unknown)
        {
            if (!ForwardedValues.TryParseNode(node, rfc7239, out ReadOnlySpan<char> address, out int port, out unknown))
            {
                return false;
            }

            if (!unknown && (endpoint = EndPointOf(hop, node, address, port)) is null)
            {
                return false;
            }
        }

        if (endpoint is not null)
        {
            _remote = endpoint;
        }

        _scheme = scheme ?? _scheme;
        if (!host.IsEmpty)
        {
            _host = HostString(hop, host);
        }

        // An unknown or absent address cannot be checked, so nothing further left can be trusted.
        return endpoint is not null && TrustedNetworks.Contains(_policy.TrustedProxies, endpoint.Address);
    }

    // The endpoint a node names: the one made for the same text at the same hop on an earlier request, when there is one.
    private IPEndPoint? EndPointOf(int hop, ReadOnlySpan<char> node, ReadOnlySpan<char> address, int port)
    {
        bool cacheable = hop < MaxCachedHops;
        if (cacheable && _hops[hop].EndPoint is { } known && node.SequenceEqual(_hopNodes.AsSpan(hop * MaxCachedNode, _hops[hop].NodeLength)))
        {
            return known;
        }

        if (!IPAddress.TryParse(address, out IPAddress? parsed))
        {
            return null;
        }

        var endpoint = new IPEndPoint(parsed, port);
        if (cacheable && node.Length <= MaxCachedNode)
        {
            if (_hopNodes.Length <= hop * MaxCachedNode)
            {
                Array.Resize(ref _hopNodes, MaxCachedHops * MaxCachedNode);
            }

            node.CopyTo(_hopNodes.AsSpan(hop * MaxCachedNode));
            _hops[hop].NodeLength = node.Length;
            _hops[hop].EndPoint = endpoint;
        }

        return endpoint;
    }

    private string HostString(int hop, ReadOnlySpan<char> host)
    {
        if (hop >= MaxCachedHops)
        {
            return host.ToString();
        }

        ref string? cached = ref _hops[hop].Host;
        if (cached is null || !host.SequenceEqual(cached))
        {
            cached = host.ToString();
        }

        return cached;
    }

    /// <summary>What one hop named on an earlier request: its node's text (in the node buffer) and endpoint, and its host.</summary>
    private struct CachedHop
    {
        public int NodeLength;
        public IPEndPoint? EndPoint;
        public string? Host;
    }
}
