using System;
using System.Runtime.CompilerServices;

namespace Falconet.Text;

/// <summary>The delimiter scans the HTTP/1.1 parser uses: forwards to the implementation the benchmark measured fastest.</summary>
/// <remarks>See docs/http-parsing.md ("Vector search") for the figures behind the choice.</remarks>
public static class HttpScanner
{
    /// <summary>Returns the index of the first byte that is not an RFC 9110 tchar, or -1 when every byte is one.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static int IndexOfNonToken(ReadOnlySpan<byte> span) => IntrinsicsHttpScanner.IndexOfNonToken(span);

    /// <summary>Returns the index of the first byte that cannot appear in a field value (a CTL other than HTAB, or DEL), or -1.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static int IndexOfFieldValueEnd(ReadOnlySpan<byte> span) => IntrinsicsHttpScanner.IndexOfFieldValueEnd(span);
}
