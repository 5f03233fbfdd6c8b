using System;
using Falconet.Http.Http2.HPack;

namespace Falconet.Http.Http2;

/// <summary>
/// The struct the HPACK decoder is compiled for, per header set: pseudo-headers go to <see cref="Http2RequestHead"/>, regular
/// fields into the stream's <see cref="RequestHeaders"/> through the set's slots (the generated matcher, called once per
/// literal name or dynamic table entry), with RFC 9113 section 8.2's rules for what a request may not carry. Trailers go
/// into <see cref="HttpRequest.Trailers"/>, as a chunked body's trailer section does on HTTP/1.1, with the same fields refused.
/// </summary>
/// <typeparam name="THeaderSet">The server's header set: a struct, so its matcher is a direct call.</typeparam>
internal struct Http2RequestHeadersHandler<THeaderSet> : IHPackHeaderHandler
    where THeaderSet : struct, IHeaderSet
{
    private static readonly int s_host = RequestHeaders.Table.IndexOf("Host");
    private static readonly int s_connection = RequestHeaders.Table.IndexOf("Connection");
    private static readonly int s_keepAlive = RequestHeaders.Table.IndexOf("Keep-Alive");
    private static readonly int s_transferEncoding = RequestHeaders.Table.IndexOf("Transfer-Encoding");
    private static readonly int s_upgrade = RequestHeaders.Table.IndexOf("Upgrade");
    private static readonly int s_te = RequestHeaders.Table.IndexOf("TE");

    private readonly Http2RequestHead _head;
    private readonly HttpRequest? _request;
    private readonly int _maxFields;
    private readonly bool _trailers;

    /// <summary>
    /// A request's header block into <paramref name="request"/>, or with <paramref name="trailers"/> its trailer section
    /// into <see cref="HttpRequest.Trailers"/>; a null request: a block only checked (a refused or closed stream's).
    /// </summary>
    public Http2RequestHeadersHandler(Http2RequestHead head, HttpRequest? request, int maxFields, bool trailers)
    {
        _head = head;
        _request = request;
        _maxFields = maxFields;
        _trailers = trailers;
    }

    public readonly int ResolveSlot(ReadOnlySpan<byte> name) => THeaderSet.IndexOfRequestHeader(name);

    public readonly void OnPseudoHeader(PseudoHeader header, ReadOnlySpan<byte> value)
    {
        if (_request is null || _trailers)
        {
            // Section 8.1: trailers carry no pseudo-header.
            _head.SetMalformed("a pseudo-header in trailers");
            return;
        }

        if (!_head.TryTakePseudo(header))
        {
            return;
        }

        switch (header)
        {
            case PseudoHeader.Method:
                _head.SetMethod(value);
                break;
            case PseudoHeader.Path:
                if (value.IsEmpty)
                {
                    _head.SetMalformed("an empty :path");
                    return;
                }

                _head.SetPath(value);
                break;
            case PseudoHeader.Scheme:
                if (value.IsEmpty)
                {
                    _head.SetMalformed("an empty :scheme");
                }

                break;
            case PseudoHeader.Authority:
                // Section 8.3.1: the authority stands in for Host; an authority with userinfo is malformed. The collection
                // hands back the previous request's string for an equal value, which was checked then.
                RequestHeaders headers = _request.Headers;
                headers.TryAppendMatched(s_host, "host"u8, value);
                string host = headers.Host[0]!;
                if (!ReferenceEquals(host, _request.ValidatedHost))
                {
                    if (!UriAuthority.IsHostAndPort(host.AsSpan(), requirePort: false))
                    {
                        _head.SetMalformed("an invalid :authority");
                        return;
                    }

                    _request.ValidatedHost = host;
                }

                break;
        }
    }

    public readonly void OnHeader(int slot, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        _head.CountField(_maxFields);
        if (slot >= 0 && slot < HeaderTable.ContentLengthIndex)
        {
            if (slot == s_connection || slot == s_keepAlive || slot == s_transferEncoding || slot == s_upgrade)
            {
                // Section 8.2.2: connection-specific fields make a message malformed.
                _head.SetMalformed("a connection-specific header field");
                return;
            }

            if (slot == s_te && !value.SequenceEqual("trailers"u8))
            {
                _head.SetMalformed("TE other than \"trailers\"");
                return;
            }
        }
        else if (slot < 0 && name.SequenceEqual("proxy-connection"u8))
        {
            _head.SetMalformed("a connection-specific header field");
            return;
        }

        if (_request is null)
        {
            return;
        }

        if (_trailers)
        {
            // RFC 9110 section 6.5.1: as on HTTP/1.1, framing, routing and connection fields are refused in trailers. Matched
            // by name in the trailers' own (default) table, whatever the server's header set.
            if (TrailerFields.IsForbidden(name) || !_request.Trailers.TryAppend(name, value))
            {
                _head.SetMalformed("a field a trailer section must not carry");
            }

            return;
        }

        RequestHeaders headers = _request.Headers;
        if (slot == s_host && _head.HasAuthority)
        {
            // Section 8.3.1: a Host that names another authority than :authority is malformed; the same one is redundant.
            string host = headers.Host.ToString();
            if (host.Length != value.Length || !Falconet.Text.Latin1.Equals(value, host))
            {
                _head.SetMalformed("a Host that differs from :authority");
            }

            return;
        }

        if (!headers.TryAppendMatched(slot, name, value))
        {
            // An invalid or conflicting Content-Length.
            _head.SetMalformed("an invalid content-length");
        }
    }
}
