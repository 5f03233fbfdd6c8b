using System;
using System.IO;
using System.Text;

namespace Falconet.Http;

/// <summary>
/// The request being handled on a connection: method, target, version, headers and body. One object per
/// connection, reset for every request; spans are valid until the handler's task completes.
/// </summary>
public class HttpRequest
{
    private const int InitialTargetCapacity = 256;

    private byte[] _target = new byte[InitialTargetCapacity];
    private int _targetLength;
    private int _authorityStart;
    private int _pathStart;
    private int _pathLength;
    private int _queryIndex;
    private byte[] _customMethod = Array.Empty<byte>();
    private int _customMethodLength;
    private string? _customMethodName;

    /// <summary>The Host string last found valid on this connection; a request that reuses it is not checked again.</summary>
    internal string? ValidatedHost;

    /// <summary>The forwarding headers under the server's policy (null when it has none).</summary>
    internal ForwardedResolver? Forwarded;

    /// <summary>True when the request arrived over TLS.</summary>
    internal bool IsHttps;
    private string? _path;
    private bool _pathCurrent;
    private string? _query;
    private bool _queryCurrent;
    private string? _authority;
    private bool _authorityCurrent;
    private RequestHeaders? _trailers;

    // The request line the fields above were last set from by the one-call parse of a head, as received (method, target,
    // version and CRLF), or none: any other way of setting them forgets it.
    private RepeatedBytes _line;

    /// <summary>The longest request line kept for <see cref="TryRepeatRequestLine"/>.</summary>
    internal const int MaxRepeatedLineLength = 256;

    // The kept request line and the headers' kept section as one run, when a head repeated both (see TryRepeatRequestHead),
    // with the stamps of the two runs it was made of: it stands only while neither has been forgotten or replaced since.
    private RepeatedBytes _head;
    private int _headLineStamp;
    private int _headSectionStamp;

    internal HttpRequest(RequestHeaders headers, RequestBodyReader bodyReader)
    {
        Headers = headers;
        BodyReader = bodyReader;
        Body = new RequestBodyStream(bodyReader);
        bodyReader.Attach(this);
    }

    /// <summary>The method, or <see cref="KnownMethod.Custom"/> for a token outside the schema (see <see cref="MethodBytes"/>).</summary>
    public KnownMethod Method { get; private set; }

    /// <summary>The method token as sent, e.g. "GET".</summary>
    public ReadOnlySpan<byte> MethodBytes
        => Method == KnownMethod.Custom ? _customMethod.AsSpan(0, _customMethodLength) : KnownMethods.GetBytes(Method);

    /// <summary>The method as a string: a cached string for known methods, made once per distinct custom token.</summary>
    public string MethodName
    {
        get
        {
            if (Method != KnownMethod.Custom)
            {
                return KnownMethods.GetName(Method);
            }

            ReadOnlySpan<byte> token = MethodBytes;
            if (_customMethodName is null || !Ascii.Equals(token, _customMethodName))
            {
                _customMethodName = Encoding.ASCII.GetString(token);
            }

            return _customMethodName;
        }
    }

    /// <summary>The version of an HTTP/1.x request line (<see cref="KnownVersion.None"/> on HTTP/2, which has none: see <see cref="ProtocolVersion"/>).</summary>
    public KnownVersion Version { get; private set; }

    /// <summary>The protocol version as a string: "HTTP/1.0", "HTTP/1.1" or "HTTP/2".</summary>
    public string Protocol => BodyReader.IsHttp2 ? "HTTP/2" : KnownVersions.GetName(Version);

    /// <summary>The HTTP version that carried the request; a handler needs it only where the protocols differ (trailers, say).</summary>
    public HttpProtocolVersion ProtocolVersion => BodyReader.IsHttp2
        ? HttpProtocolVersion.Http2
        : Version == KnownVersion.Http10 ? HttpProtocolVersion.Http10 : HttpProtocolVersion.Http11;

    /// <summary>The form of the request target (origin, absolute, authority or asterisk).</summary>
    public RequestTargetForm TargetForm { get; private set; }

    /// <summary>The request target exactly as sent.</summary>
    public ReadOnlySpan<byte> RawTarget => _target.AsSpan(0, _targetLength);

    /// <summary>
    /// The path, raw (percent-encoded as sent): "/a/b" for "/a/b?x=1" and for "http://host/a/b?x=1" ("/" for
    /// "http://host"); "*" for an asterisk target; the authority ("host:443") for a CONNECT target.
    /// </summary>
    public ReadOnlySpan<byte> PathBytes
        => _pathLength == 0 && TargetForm == RequestTargetForm.Absolute ? "/"u8 : _target.AsSpan(_pathStart, _pathLength);

    /// <summary>The query after '?' (without it), raw; empty when the target has none.</summary>
    public ReadOnlySpan<byte> QueryBytes
        => _queryIndex < 0 ? ReadOnlySpan<byte>.Empty : _target.AsSpan(_queryIndex + 1, _targetLength - _queryIndex - 1);

    /// <summary>True when the target had a '?'.</summary>
    public bool HasQuery => _queryIndex >= 0;

    /// <summary>The path as a string, made on first use per request (and reused while consecutive requests ask for the same path).</summary>
    public string Path
    {
        get
        {
            if (!_pathCurrent)
            {
                _path = Materialize(PathBytes, _path);
                _pathCurrent = true;
            }

            return _path!;
        }
    }

    /// <summary>The query (without '?') as a string, made on first use per request.</summary>
    public string Query
    {
        get
        {
            if (!_queryCurrent)
            {
                _query = Materialize(QueryBytes, _query);
                _queryCurrent = true;
            }

            return _query!;
        }
    }

    /// <summary>
    /// The scheme the client used: "https" when the request arrived over TLS, "http" otherwise, unless a trusted proxy said
    /// otherwise (<see cref="Server.FalconetServerOptions.ForwardedHeaders"/>). A shared string; never allocates.
    /// </summary>
    public string Scheme => Forwarded?.Scheme ?? (IsHttps ? "https" : "http");

    /// <summary>
    /// The host the request is for, with its port when one was sent: the authority of an absolute-form or CONNECT
    /// target, which wins over the Host header (RFC 9112 section 3.2.2); otherwise the Host header, "" when it is
    /// empty or (HTTP/1.0 only) absent. Made on first use per request for a target authority; the header's own string otherwise.
    /// Under <see cref="Server.FalconetServerOptions.ForwardedHeaders"/>, the host a trusted proxy said the client sent wins.
    /// </summary>
    public string Host
    {
        get
        {
            if (Forwarded?.Host is { } forwarded)
            {
                return forwarded;
            }

            if (TargetForm is RequestTargetForm.Origin or RequestTargetForm.Asterisk)
            {
                // Validated when the header section completed: at most one value.
                return Headers.Host.ToString();
            }

            if (!_authorityCurrent)
            {
                int end = TargetForm == RequestTargetForm.Authority ? _targetLength : _pathStart;
                _authority = Materialize(_target.AsSpan(_authorityStart, end - _authorityStart), _authority);
                _authorityCurrent = true;
            }

            return _authority!;
        }
    }

    /// <summary>The request headers (generated collection, reused across requests of the connection).</summary>
    public RequestHeaders Headers { get; }

    /// <summary>The Content-Length header, if the request has one.</summary>
    public long? ContentLength => Headers.ContentLength;

    /// <summary>How the body is framed: none, Content-Length or chunked.</summary>
    public RequestBodyKind BodyKind { get; internal set; }

    /// <summary>True when the request carries a body (Content-Length above 0, chunked, or HTTP/2 DATA frames).</summary>
    public bool HasBody => BodyKind is RequestBodyKind.Chunked or RequestBodyKind.Frames || (BodyKind == RequestBodyKind.ContentLength && Headers.ContentLength > 0);

    /// <summary>
    /// The request's trailer fields (RFC 9110 section 6.5), sent after a chunked body: kept apart from <see cref="Headers"/>
    /// and never merged into them, parsed with the header section's rules and limits. Complete once the body has been read
    /// to its end (<see cref="TrailersAvailable"/>); empty before that and for a request without trailers. Fields whose
    /// presence there is a framing or routing hazard (Content-Length, Transfer-Encoding, Host, connection fields) are
    /// refused with 400 instead (docs/http-parsing.md). Made on first use and reused by the connection's later requests.
    /// </summary>
    public RequestHeaders Trailers => _trailers ??= new RequestHeaders();

    /// <summary>True once the body has been read to its end (at once without a body): <see cref="Trailers"/> then holds every trailer field sent.</summary>
    public bool TrailersAvailable => BodyReader.IsCompleted;

    /// <summary>Reads the body as spans; the first read of a request that sent Expect: 100-continue sends the interim response.</summary>
    public RequestBodyReader BodyReader { get; }

    /// <summary>The body as a read-only <see cref="System.IO.Stream"/> (one object per connection).</summary>
    public Stream Body { get; }

    internal void SetRequestLine(KnownMethod method, ReadOnlySpan<byte> methodToken, ReadOnlySpan<byte> target,
        RequestTargetForm form, int queryIndex, KnownVersion version)
    {
        _line.Forget();
        Method = method;
        Version = version;
        TargetForm = form;
        if (method == KnownMethod.Custom)
        {
            if (_customMethod.Length < methodToken.Length)
            {
                _customMethod = new byte[Math.Max(16, methodToken.Length)];
            }

            methodToken.CopyTo(_customMethod);
            _customMethodLength = methodToken.Length;
        }

        if (_target.Length < target.Length)
        {
            _target = new byte[Math.Max(target.Length, _target.Length * 2)];
        }

        target.CopyTo(_target);
        _targetLength = target.Length;
        _queryIndex = queryIndex;
        int pathEnd = queryIndex < 0 ? target.Length : queryIndex;
        _authorityStart = 0;
        _pathStart = form == RequestTargetForm.Absolute ? FindAbsolutePathStart(target[..pathEnd], out _authorityStart) : 0;
        _pathLength = pathEnd - _pathStart;
        _pathCurrent = false;
        _queryCurrent = false;
        _authorityCurrent = false;
        BodyKind = RequestBodyKind.None;
        _trailers?.Clear();
    }

    /// <summary>
    /// When <paramref name="received"/> starts with the request line this request was set from last (see
    /// <see cref="RememberRequestLine"/>), makes it this request's again and returns the line's length; otherwise 0 and
    /// nothing changes.
    /// </summary>
    /// <remarks>
    /// The same bytes parse to the same method, target, query and version, which the fields still hold: only the state of
    /// the request that came after the line is reset. The path and query strings made for the previous request stay
    /// current (they were made from the same bytes).
    /// </remarks>
    internal int TryRepeatRequestLine(ReadOnlySpan<byte> received)
    {
        int length = _line.Match(received);
        if (length != 0)
        {
            BodyKind = RequestBodyKind.None;
            _trailers?.Clear();
        }

        return length;
    }

    /// <summary>Keeps <paramref name="line"/>, the bytes the request line was just set from, for <see cref="TryRepeatRequestLine"/>.</summary>
    internal void RememberRequestLine(ReadOnlySpan<byte> line) => _line.Keep(line, MaxRepeatedLineLength);

    /// <summary>
    /// When <paramref name="received"/> starts with the whole head kept by <see cref="RememberRequestHead"/> and both of its
    /// parts are still the kept line and the kept section, makes it this request's head again, as
    /// <see cref="TryRepeatRequestLine"/> and <see cref="RequestHeaderCollection.TryRepeatSection"/> would one after the other,
    /// with one compare; returns its length, otherwise 0 and nothing changes.
    /// </summary>
    internal int TryRepeatRequestHead(ReadOnlySpan<byte> received)
    {
        RequestHeaders headers = Headers;
        int length;
        if (_head.Length == 0 || _headLineStamp != _line.Stamp || _headSectionStamp != headers.SectionStamp
            || (length = _head.Match(received)) == 0 || !headers.TryRestoreSection())
        {
            return 0;
        }

        BodyKind = RequestBodyKind.None;
        _trailers?.Clear();
        return length;
    }

    /// <summary>
    /// Keeps <paramref name="head"/>, a head whose request line repeated the kept line and whose section repeated the headers'
    /// kept section, as one run for <see cref="TryRepeatRequestHead"/>.
    /// </summary>
    internal void RememberRequestHead(ReadOnlySpan<byte> head)
    {
        if (_head.Keep(head, MaxRepeatedLineLength + RequestHeaderCollection.MaxRepeatedSectionLength))
        {
            _headLineStamp = _line.Stamp;
            _headSectionStamp = Headers.SectionStamp;
        }
    }

    // "http://host:port/path": the authority follows "://" and the path starts at the next '/'; a bare authority has an empty path.
    private static int FindAbsolutePathStart(ReadOnlySpan<byte> target, out int authorityStart)
    {
        int scheme = target.IndexOf("://"u8);
        authorityStart = scheme < 0 ? 0 : scheme + 3;
        int slash = target[authorityStart..].IndexOf((byte)'/');
        return slash < 0 ? target.Length : authorityStart + slash;
    }

    private static string Materialize(ReadOnlySpan<byte> bytes, string? previous)
    {
        if (bytes.IsEmpty)
        {
            return string.Empty;
        }

        if (previous is not null && previous.Length == bytes.Length && Ascii.Equals(bytes, previous))
        {
            return previous;
        }

        return Encoding.Latin1.GetString(bytes);
    }
}
