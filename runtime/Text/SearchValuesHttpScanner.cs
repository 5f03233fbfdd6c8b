using System;
using System.Buffers;

namespace Falconet.Text;

/// <summary>The same scans as <see cref="IntrinsicsHttpScanner"/>, written with <see cref="SearchValues{T}"/> and IndexOfAny.</summary>
public static class SearchValuesHttpScanner
{
    private static readonly SearchValues<byte> s_tokenChars = SearchValues.Create(HttpCharacters.TokenChars);

    private static readonly SearchValues<byte> s_fieldValueEnds = SearchValues.Create(
        [0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, /* HTAB allowed */ 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F,
         0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1A, 0x1B, 0x1C, 0x1D, 0x1E, 0x1F, 0x7F]);

    /// <summary>Returns the index of the first byte that is not an RFC 9110 tchar, or -1 when every byte is one.</summary>
    public static int IndexOfNonToken(ReadOnlySpan<byte> span) => span.IndexOfAnyExcept(s_tokenChars);

    /// <summary>Returns the index of the first byte that cannot appear in a field value (a CTL other than HTAB, or DEL), or -1.</summary>
    public static int IndexOfFieldValueEnd(ReadOnlySpan<byte> span) => span.IndexOfAny(s_fieldValueEnds);
}
