using System;
using System.Runtime.CompilerServices;

namespace Falconet.Text;

/// <summary>Byte classes of HTTP/1.1 syntax (RFC 9110 tchar, field-value bytes, hex digits) with scalar lookups.</summary>
public static class HttpCharacters
{
    private static readonly byte[] s_tokenChars = System.Text.Encoding.ASCII.GetBytes(HttpTokenChars.All);

    /// <summary>The RFC 9110 section 5.6.2 tchar set: every byte allowed in a token (method, field-name, coding).</summary>
    public static ReadOnlySpan<byte> TokenChars => s_tokenChars;

    private const byte TokenFlag = 1;
    private const byte FieldValueFlag = 2;

    // One flag byte per possible input byte; built once so the hot scalar paths are a single load.
    private static readonly byte[] s_flags = BuildFlags();

    /// <summary>True when <paramref name="value"/> is an RFC 9110 tchar.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static bool IsTokenChar(byte value) => (s_flags[value] & TokenFlag) != 0;

    /// <summary>True when <paramref name="value"/> may appear in a field value: VCHAR, obs-text, SP or HTAB.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static bool IsFieldValueChar(byte value) => (s_flags[value] & FieldValueFlag) != 0;

    /// <summary>True when <paramref name="value"/> is a visible US-ASCII character (VCHAR, 0x21 to 0x7E).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static bool IsVisibleAscii(byte value) => (uint)(value - 0x21) <= 0x7E - 0x21;

    /// <summary>True when <paramref name="value"/> is optional whitespace (SP or HTAB, RFC 9110 section 5.6.3).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static bool IsWhitespace(byte value) => value == (byte)' ' || value == (byte)'\t';

    /// <summary>Returns the value of a hexadecimal digit (either case), or -1 when the byte is not one.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static int HexValue(byte value)
    {
        uint digit = (uint)(value - '0');
        if (digit <= 9)
        {
            return (int)digit;
        }

        uint letter = (uint)((value | 0x20) - 'a');
        return letter <= 5 ? (int)letter + 10 : -1;
    }

    /// <summary>True when every byte of <paramref name="span"/> is a tchar and the span is not empty.</summary>
    public static bool IsToken(ReadOnlySpan<byte> span) => !span.IsEmpty && HttpScanner.IndexOfNonToken(span) < 0;

    /// <summary>Removes leading and trailing optional whitespace (SP, HTAB).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ReadOnlySpan<byte> TrimWhitespace(ReadOnlySpan<byte> span)
    {
        int start = 0;
        while (start < span.Length && IsWhitespace(span[start]))
        {
            start++;
        }

        int end = span.Length;
        while (end > start && IsWhitespace(span[end - 1]))
        {
            end--;
        }

        return span[start..end];
    }

    private static byte[] BuildFlags()
    {
        var flags = new byte[256];
        foreach (byte token in TokenChars)
        {
            flags[token] |= TokenFlag;
        }

        for (int b = 0; b < 256; b++)
        {
            if (b == '\t' || b == ' ' || (b >= 0x21 && b != 0x7F))
            {
                flags[b] |= FieldValueFlag;
            }
        }

        return flags;
    }
}
