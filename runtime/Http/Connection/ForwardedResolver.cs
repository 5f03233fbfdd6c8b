using System;
using System.Net;
using Falconet.Server;
using Falconet.Transport;
using Microsoft.Extensions.Primitives;

namespace Falconet.Http;

/// <summary>
/// What the forwarding headers of the current request say, under a <see cref="ForwardedHeadersPolicy"/>: made once per
/// connection when the server has a policy, reset for every request, and read on first use (a request whose handler never
/// asks for its remote endpoint, scheme or host costs nothing more). The client's endpoint is kept across requests, so a
/// connection whose proxy names the same client again allocates nothing.
/// </summary>
internal sealed class ForwardedResolver
{
    // The longest node text kept for reuse: a bracketed IPv6 address with an embedded IPv4 tail and a port.
    private const int MaxCachedNode = 64;

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

    private readonly char[] _lastNode = new char[MaxCachedNode];
    private int _lastNodeLength;
    private IPEndPoint? _lastEndPoint;
    private string? _lastHost;

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
        while (elements.TryReadPrevious(out ReadOnlySpan<char> element, out bool malformed))
        {
            if (malformed || !ForwardedValues.TryParseElement(element, out ReadOnlySpan<char> node, out ReadOnlySpan<char> proto, out ReadOnlySpan<char> host))
            {
                return;
            }

            if (!ApplyHop(node, rfc7239: true, proto, host))
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
        while (true)
        {
            bool hasNode = addresses.TryReadPrevious(out ReadOnlySpan<char> node, out bool badNode);
            bool hasProto = protos.TryReadPrevious(out ReadOnlySpan<char> proto, out bool badProto);
            bool hasHost = hosts.TryReadPrevious(out ReadOnlySpan<char> host, out bool badHost);
            if (!(hasNode || hasProto || hasHost) || badNode || badProto || badHost
                || !ApplyHop(node, rfc7239: false, proto, host))
            {
                return;
            }
        }
    }

    /// <summary>
    /// Takes what one hop said, all of it or nothing; true when its address is a trusted proxy, so the hop before it may be read.
    /// </summary>
    private bool ApplyHop(ReadOnlySpan<char> node, bool rfc7239, ReadOnlySpan<char> proto, ReadOnlySpan<char> host)
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

            if (!unknown && (endpoint = EndPointOf(node, address, port)) is null)
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
            _host = HostString(host);
        }

        // An unknown or absent address cannot be checked, so nothing further left can be trusted.
        return endpoint is not null && TrustedNetworks.Contains(_policy.TrustedProxies, endpoint.Address);
    }

    private IPEndPoint? EndPointOf(ReadOnlySpan<char> node, ReadOnlySpan<char> address, int port)
    {
        if (_lastEndPoint is not null && node.SequenceEqual(_lastNode.AsSpan(0, _lastNodeLength)))
        {
            return _lastEndPoint;
        }

        if (!IPAddress.TryParse(address, out IPAddress? parsed))
        {
            return null;
        }

        var endpoint = new IPEndPoint(parsed, port);
        if (node.Length <= MaxCachedNode)
        {
            node.CopyTo(_lastNode);
            _lastNodeLength = node.Length;
            _lastEndPoint = endpoint;
        }

        return endpoint;
    }

    private string HostString(ReadOnlySpan<char> host)
    {
        if (_lastHost is null || !host.SequenceEqual(_lastHost))
        {
            _lastHost = host.ToString();
        }

        return _lastHost;
    }
}
