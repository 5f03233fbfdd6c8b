using System;
using System.Buffers;
using System.Text;
using Falconet.Http;

namespace Falconet.AspNetCore;

/// <summary>
/// Turns Falconet's raw request target into what ASP.NET Core expects of IHttpRequestFeature: the path percent-decoded
/// (UTF-8, "%2F" kept encoded so it cannot split a segment) with dot segments removed (RFC 3986 section 5.2.4), and
/// the query with its '?'; an asterisk-form or authority-form target has an empty path. A target that needs neither reuses Falconet's cached path string; strings made here are
/// reused while the next request of the connection sends the same bytes.
/// </summary>
internal sealed class RequestTarget
{
    private static readonly SearchValues<byte> s_decodeOrDot = SearchValues.Create("%."u8);
    private static readonly UTF8Encoding s_strictUtf8 = new(encoderShouldEmitUTF8Identifier: false, throwOnInvalidBytes: true);

    private byte[] _lastPath = Array.Empty<byte>();
    private int _lastPathLength;
    private string? _decodedPath;
    private byte[] _lastQuery = Array.Empty<byte>();
    private int _lastQueryLength;
    private string? _queryString;

    public string DecodePath(HttpRequest request)
    {
        if (request.TargetForm is RequestTargetForm.Asterisk or RequestTargetForm.Authority)
        {
            // "OPTIONS *" and CONNECT's authority name no resource: an empty path, as Kestrel reports them, which no route
            // matches (a PathString must otherwise start with '/'). RawTarget keeps the target as sent.
            return string.Empty;
        }

        ReadOnlySpan<byte> raw = request.PathBytes;
        if (raw.IndexOfAny(s_decodeOrDot) < 0)
        {
            return request.Path;
        }

        if (_decodedPath is not null && raw.SequenceEqual(_lastPath.AsSpan(0, _lastPathLength)))
        {
            return _decodedPath;
        }

        _decodedPath = RemoveDotSegments(Decode(raw));
        Remember(raw, ref _lastPath, ref _lastPathLength);
        return _decodedPath;
    }

    public string QueryString(HttpRequest request)
    {
        if (!request.HasQuery)
        {
            return string.Empty;
        }

        ReadOnlySpan<byte> query = request.QueryBytes;
        if (_queryString is not null && query.SequenceEqual(_lastQuery.AsSpan(0, _lastQueryLength)))
        {
            return _queryString;
        }

        _queryString = string.Create(query.Length + 1, query.ToArray(), static (chars, bytes) =>
        {
            chars[0] = '?';
            Encoding.Latin1.GetChars(bytes, chars[1..]);
        });
        Remember(query, ref _lastQuery, ref _lastQueryLength);
        return _queryString;
    }

    public string RawTarget(HttpRequest request) => Encoding.Latin1.GetString(request.RawTarget);

    private static void Remember(ReadOnlySpan<byte> bytes, ref byte[] store, ref int length)
    {
        if (store.Length < bytes.Length)
        {
            store = new byte[Math.Max(64, bytes.Length)];
        }

        bytes.CopyTo(store);
        length = bytes.Length;
    }

    /// <summary>Percent-decodes into UTF-8 text, except "%2F" (a slash inside a segment), which stays as sent; invalid escapes stay as sent.</summary>
    internal static string Decode(ReadOnlySpan<byte> raw)
    {
        byte[]? rented = null;
        Span<byte> decoded = raw.Length <= 512 ? stackalloc byte[raw.Length] : (rented = ArrayPool<byte>.Shared.Rent(raw.Length));
        int length = 0;
        for (int i = 0; i < raw.Length; i++)
        {
            byte b = raw[i];
            if (b == '%' && i + 2 < raw.Length && TryHex(raw[i + 1], raw[i + 2], out byte value) && value != '/')
            {
                decoded[length++] = value;
                i += 2;
            }
            else
            {
                decoded[length++] = b;
            }
        }

        string text;
        try
        {
            text = s_strictUtf8.GetString(decoded[..length]);
        }
        catch (DecoderFallbackException)
        {
            // Not UTF-8 once decoded: keep the bytes as sent, as a browser would show them.
            text = Encoding.Latin1.GetString(raw);
        }

        if (rented is not null)
        {
            ArrayPool<byte>.Shared.Return(rented);
        }

        return text;
    }

    /// <summary>Removes "." and ".." segments (RFC 3986 section 5.2.4), so a path can never climb above the root.</summary>
    internal static string RemoveDotSegments(string path)
    {
        if (!path.Contains("/.", StringComparison.Ordinal))
        {
            return path;
        }

        var output = new StringBuilder(path.Length);
        ReadOnlySpan<char> input = path;
        while (!input.IsEmpty)
        {
            if (input.StartsWith("/./"))
            {
                input = input[2..];
            }
            else if (input.SequenceEqual("/."))
            {
                input = "/";
            }
            else if (input.StartsWith("/../"))
            {
                input = input[3..];
                RemoveLastSegment(output);
            }
            else if (input.SequenceEqual("/.."))
            {
                input = "/";
                RemoveLastSegment(output);
            }
            else
            {
                int next = input[1..].IndexOf('/');
                int segment = next < 0 ? input.Length : next + 1;
                output.Append(input[..segment]);
                input = input[segment..];
            }
        }

        return output.Length == 0 ? "/" : output.ToString();
    }

    private static void RemoveLastSegment(StringBuilder output)
    {
        int length = output.Length;
        while (length > 0 && output[length - 1] != '/')
        {
            length--;
        }

        output.Length = length > 0 ? length - 1 : 0;
    }

    private static bool TryHex(byte high, byte low, out byte value)
    {
        int h = HexValue(high);
        int l = HexValue(low);
        value = (byte)((h << 4) | l);
        return h >= 0 && l >= 0;
    }

    private static int HexValue(byte b) => b switch
    {
        >= (byte)'0' and <= (byte)'9' => b - '0',
        >= (byte)'a' and <= (byte)'f' => b - 'a' + 10,
        >= (byte)'A' and <= (byte)'F' => b - 'A' + 10,
        _ => -1,
    };
}
