using System.Collections.Generic;
using System.Text;

namespace Falconet.Generator.Schema;

/// <summary>Maps byte offsets of the UTF-8 text the JSON reader sees to character positions, lines and columns.</summary>
internal sealed class SourcePositions
{
    private readonly string _path;
    private readonly byte[] _utf8;
    private readonly List<int> _lineStarts = new() { 0 };

    public SourcePositions(string path, byte[] utf8)
    {
        _path = path;
        _utf8 = utf8;
        for (int i = 0; i < utf8.Length; i++)
        {
            if (utf8[i] == (byte)'\n')
            {
                _lineStarts.Add(i + 1);
            }
        }
    }

    /// <summary>Absolute byte offset of a (zero-based line, byte in line) pair reported by a JSON exception.</summary>
    public int ByteOffset(long line, long byteInLine)
    {
        int index = line < 0 ? 0 : line >= _lineStarts.Count ? _lineStarts.Count - 1 : (int)line;
        long offset = _lineStarts[index] + byteInLine;
        return (int)(offset < 0 ? 0 : offset > _utf8.Length ? _utf8.Length : offset);
    }

    public LocationInfo Locate(long byteStart, long byteLength)
    {
        int start = Clamp(byteStart);
        int end = Clamp(byteStart + byteLength);
        (int startLine, int startColumn) = LineAndColumn(start);
        (int endLine, int endColumn) = LineAndColumn(end);
        int charStart = CharCount(0, start);
        int charLength = CharCount(start, end - start);
        return new LocationInfo(_path, charStart, charLength, startLine, startColumn, endLine, endColumn);
    }

    private (int Line, int Column) LineAndColumn(int offset)
    {
        int line = _lineStarts.BinarySearch(offset);
        if (line < 0)
        {
            line = ~line - 1;
        }

        int lineStart = _lineStarts[line];
        return (line, CharCount(lineStart, offset - lineStart));
    }

    private int CharCount(int start, int count) => count <= 0 ? 0 : Encoding.UTF8.GetCharCount(_utf8, start, count);

    private int Clamp(long offset) => (int)(offset < 0 ? 0 : offset > _utf8.Length ? _utf8.Length : offset);
}
