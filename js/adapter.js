// placeholder until the callModel adapter lands
export {};
