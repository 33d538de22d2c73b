print("toneshaper: under construction")
