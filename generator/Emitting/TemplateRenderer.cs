using System.IO;
using System.Text;
using HandlebarsDotNet;

namespace Falconet.Generator.Emitting;

/// <summary>The embedded Handlebars templates, compiled once with HTML escaping off and shared by every run.</summary>
internal static class TemplateRenderer
{
    private static readonly IHandlebars s_handlebars = CreateEngine();

    public static readonly HandlebarsTemplate<object, object> KnownMethods = Compile("KnownMethods");
    public static readonly HandlebarsTemplate<object, object> KnownVersions = Compile("KnownVersions");
    public static readonly HandlebarsTemplate<object, object> Headers = Compile("Headers");
    public static readonly HandlebarsTemplate<object, object> HeaderSet = Compile("HeaderSet");
    public static readonly HandlebarsTemplate<object, object> HPackStaticTable = Compile("HPackStaticTable");
    public static readonly HandlebarsTemplate<object, object> HPackHuffman = Compile("HPackHuffman");

    private static IHandlebars CreateEngine()
    {
        // NoEscape: the output is C#, where HTML entities would corrupt string literals and generics.
        IHandlebars engine = Handlebars.Create(new HandlebarsConfiguration { NoEscape = true });
        engine.RegisterTemplate("FileHeader", Load("FileHeader"));
        engine.RegisterTemplate("HeaderTable", Load("HeaderTable"));
        engine.RegisterTemplate("HeaderProperty", Load("HeaderProperty"));
        engine.RegisterTemplate("NameMatcher", Load("NameMatcher"));
        return engine;
    }

    private static HandlebarsTemplate<object, object> Compile(string name) => s_handlebars.Compile(Load(name));

    /// <summary>The text of an embedded template, with line endings normalized to \n.</summary>
    public static string Load(string name)
    {
        using Stream stream = typeof(TemplateRenderer).Assembly.GetManifestResourceStream("Falconet.Generator.Templates." + name + ".hbs")!;
        using var reader = new StreamReader(stream, Encoding.UTF8);
        return reader.ReadToEnd().Replace("\r\n", "\n");
    }
}
