using System;
using Falconet.Http.Http2.HPack;
using Falconet.Text;

namespace Falconet.Http.Http2;

/// <summary>
/// What the header block of one HTTP/2 request said, as its fields arrive (RFC 9113 section 8.3): the pseudo-headers seen,
/// the first reason the request is malformed or refused, and the field count. One per connection, reset per block; the
/// method, target and regular fields go straight into the stream's request as they arrive.
/// </summary>
internal sealed class Http2RequestHead
{
    private const int PseudoMethod = 1;
    private const int PseudoScheme = 2;
    private const int PseudoPath = 4;
    private const int PseudoAuthority = 8;

    private readonly int _maxPathLength;
    private byte[] _path = new byte[256];
    private readonly byte[] _method = new byte[HttpTokenChars.MaxMethodLength];
    private int _pseudo;
    private int _pathLength;
    private int _methodLength;
    private KnownMethod _lastMethod;
    private int _lastMethodLength;

    public Http2RequestHead(int maxPathLength)
    {
        _maxPathLength = maxPathLength;
    }

    /// <summary>Why the request is malformed (a stream error PROTOCOL_ERROR), or null.</summary>
    public string? Malformed { get; private set; }

    /// <summary>A request the server answers itself with a status (too many fields, a method too long), or null.</summary>
    public RequestRejectionReason? Rejection { get; private set; }

    public KnownMethod Method { get; private set; }

    /// <summary>The :method token (valid until the next block).</summary>
    public ReadOnlySpan<byte> MethodToken => _method.AsSpan(0, _methodLength);

    /// <summary>True once a regular field was seen: a pseudo-header after it is malformed (section 8.3).</summary>
    public bool RegularSeen { get; private set; }

    public int FieldCount { get; private set; }

    public bool HasAuthority => (_pseudo & PseudoAuthority) != 0;

    /// <summary>The :path value (valid until the next block).</summary>
    public ReadOnlySpan<byte> Path => _path.AsSpan(0, _pathLength);

    public bool HasPath => (_pseudo & PseudoPath) != 0;

    public bool HasScheme => (_pseudo & PseudoScheme) != 0;

    public bool HasMethod => (_pseudo & PseudoMethod) != 0;

    public void Reset()
    {
        _pseudo = 0;
        _pathLength = 0;
        _methodLength = 0;
        Malformed = null;
        Rejection = null;
        Method = KnownMethod.None;
        RegularSeen = false;
        FieldCount = 0;
    }

    public void SetMalformed(string reason) => Malformed ??= reason;

    public void Reject(RequestRejectionReason reason) => Rejection ??= reason;

    /// <summary>A pseudo-header: true when it may be taken (first of its kind, before any regular field).</summary>
    public bool TryTakePseudo(PseudoHeader header)
    {
        if (RegularSeen)
        {
            SetMalformed("a pseudo-header after a regular field");
            return false;
        }

        int bit = header switch
        {
            PseudoHeader.Method => PseudoMethod,
            PseudoHeader.Scheme => PseudoScheme,
            PseudoHeader.Path => PseudoPath,
            PseudoHeader.Authority => PseudoAuthority,
            _ => 0,
        };
        if (bit == 0)
        {
            // :status belongs to responses; :protocol needs SETTINGS_ENABLE_CONNECT_PROTOCOL, which the server does not send.
            SetMalformed("a pseudo-header a request cannot carry");
            return false;
        }

        if ((_pseudo & bit) != 0)
        {
            SetMalformed("a repeated pseudo-header");
            return false;
        }

        _pseudo |= bit;
        return true;
    }

    /// <summary>The :method value: a token (RFC 9110 section 9.1), matched against the schema's methods.</summary>
    public void SetMethod(ReadOnlySpan<byte> value)
    {
        if (_lastMethod != KnownMethod.None && value.SequenceEqual(_method.AsSpan(0, _lastMethodLength)))
        {
            // The previous request's method (the token bytes are still there): matched and checked then.
            Method = _lastMethod;
            _methodLength = _lastMethodLength;
            return;
        }

        if (value.IsEmpty || !IsToken(value))
        {
            SetMalformed("an invalid :method");
            return;
        }

        if (value.Length > HttpTokenChars.MaxMethodLength)
        {
            Reject(RequestRejectionReason.MethodTooLong);
            return;
        }

        // The generated matcher reads a request line's method and the space after it.
        Span<byte> line = stackalloc byte[HttpTokenChars.MaxMethodLength + 1];
        value.CopyTo(line);
        line[value.Length] = (byte)' ';
        KnownMethod method = KnownMethods.Match(line[..(value.Length + 1)], out int length);
        Method = length == value.Length ? method : KnownMethod.Custom;
        value.CopyTo(_method);
        _methodLength = value.Length;
        _lastMethod = Method;
        _lastMethodLength = value.Length;
    }

    /// <summary>The :path value, kept until the block is complete (the method, which decides its form, may come after it).</summary>
    public void SetPath(ReadOnlySpan<byte> value)
    {
        if (value.Length > _maxPathLength)
        {
            Reject(RequestRejectionReason.RequestLineTooLong);
            return;
        }

        if (value.IndexOfAnyExceptInRange((byte)0x21, (byte)0x7E) >= 0)
        {
            SetMalformed("a :path with a byte that is not a visible ASCII character");
            return;
        }

        if (value.Length > _path.Length)
        {
            _path = new byte[Math.Max(value.Length, _path.Length * 2)];
        }

        value.CopyTo(_path);
        _pathLength = value.Length;
    }

    /// <summary>Counts a regular field; past the limit the request is answered 431.</summary>
    public void CountField(int maxFields)
    {
        RegularSeen = true;
        if (++FieldCount > maxFields)
        {
            Reject(RequestRejectionReason.TooManyHeaders);
        }
    }

    private static readonly System.Buffers.SearchValues<byte> s_tokenChars = System.Buffers.SearchValues.Create(HttpCharacters.TokenChars);

    private static bool IsToken(ReadOnlySpan<byte> value) => value.IndexOfAnyExcept(s_tokenChars) < 0;
}
