using System.Buffers;
using System.Collections.Generic;
using System.Numerics;
using Microsoft.Extensions.Primitives;

namespace Falconet.Http;

/// <summary>Response headers as the server writes them: each known header from the precomputed "\r\nName: " bytes of its table.</summary>
public abstract class ResponseHeaderCollection : HeaderCollection
{
    /// <summary>An empty collection of the headers in <paramref name="table"/>.</summary>
    protected ResponseHeaderCollection(HeaderTable table)
        : base(table)
    {
    }

    /// <summary>
    /// Writes every header as "\r\nName: value": known headers by bit from precomputed name bytes, Content-Length as
    /// digits, then unknown headers; a header with several values is written once per value. The caller writes the
    /// status line (without its CRLF) before and "\r\n\r\n" after.
    /// </summary>
    /// <exception cref="System.InvalidOperationException">A value holds a control character or a character above U+00FF, or an unknown name is not a token.</exception>
    public void CopyTo<TWriter>(ref TWriter writer)
        where TWriter : IBufferWriter<byte>
    {
        HeaderTable table = _table;
        ulong bits = _bits;
        while (bits != 0)
        {
            int index = BitOperations.TrailingZeroCount(bits);
            bits &= bits - 1;
            foreach (string? value in _values[index])
            {
                HeaderText.WriteHeader(ref writer, table.GetPrefix(index), value);
            }
        }

        if (_contentLength is long length)
        {
            HeaderText.WriteContentLength(ref writer, length);
        }

        if (_unknown is not null)
        {
            foreach (KeyValuePair<string, StringValues> pair in _unknown)
            {
                foreach (string? value in pair.Value)
                {
                    HeaderText.WriteUnknownHeader(ref writer, pair.Key, value);
                }
            }
        }
    }
}
